// fmt's compiled part, built once here from its headers (Debian ships a shared libfmt only).
// Header-only fmt compiled it again in every source that formats, 2 s of compiler time each and
// 4 to 5 s under ASan; a shared libfmt would slow the start of the command, which a CI gate
// starts once per file. The definitions come from format-inl.h (not inline without
// FMT_HEADER_ONLY); the templates it defines and format.h only declares are instantiated below
// for char, the only character type ggufcheck formats.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
