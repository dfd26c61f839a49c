#include "loader/token_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <span>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "model/keys.hpp"
#include "util/duplicates.hpp"

namespace ggufcheck::detail {

std::string empty_token_name(std::uint64_t index) {
  return fmt::format("[EMPTY_{}]", index);
}

std::optional<std::uint64_t> empty_token_index(std::string_view text) {
  constexpr std::string_view kOpen = "[EMPTY_";
  if (!text.starts_with(kOpen) || text.size() < kOpen.size() + 2 || text.back() != ']') {
    return std::nullopt;
  }
  const std::string_view digits = text.substr(kOpen.size(), text.size() - kOpen.size() - 1);
  if (digits.size() > 10 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  std::uint64_t value = 0;
  for (const char d : digits) {
    if (d < '0' || d > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(d - '0');
  }
  return value;
}

namespace {

// A slot holds tag | (token + 1): zero is an empty slot, so a fresh mapping needs no fill.
constexpr std::uint32_t kEmptySlot = 0;
// The table is probed a group of 16 slots (a cache line) at a time: a probe compares the group's
// tags and finds its empty slots at once, without the mispredicted branch per slot that a
// slot-by-slot probe pays whenever the first slot is taken (at half full, one insert in four).
// kMaxGroups groups are kMaxProbes slots, as util/duplicates.hpp's finder.
constexpr std::size_t kGroup = 16;
constexpr std::size_t kMaxGroups = 16;
// Arrays of fewer tokens are indexed inline: a thread costs more than it saves.
constexpr std::uint64_t kThreadMinimum = 16384;

__extension__ typedef unsigned __int128 Wide;

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  const Wide m = static_cast<Wide>(a) * b;
  return static_cast<std::uint64_t>(m) ^ static_cast<std::uint64_t>(m >> 64);
}

// The mask of the low k bytes of a word, k = 0..8.
constexpr std::array<std::uint64_t, 9> kLowBytes = {0,
                                                    0xff,
                                                    0xffff,
                                                    0xffffff,
                                                    0xffffffff,
                                                    0xffffffffff,
                                                    0xffffffffffff,
                                                    0xffffffffffffff,
                                                    ~std::uint64_t{0}};

// Tokens are short (8.8 bytes on average in a 262,144-token vocabulary), and a general hash's
// branches on the length cost more than the rest of a token's indexing: a text of at most 32
// bytes is hashed from masked 8-byte loads and a multiplication per 16 bytes under the
// process's seed (the table's bound on its work does not depend on the hash: texts an input
// could make collide only send it to the ordered map). A longer text gets seeded_hash.
[[gnu::always_inline]] inline std::uint64_t token_hash(std::string_view text, const char* end,
                                                       std::uint64_t seed) {
  const std::size_t n = text.size();
  if (n > 32) [[unlikely]] {
    return seeded_hash(text);
  }
  // Only the words the text reaches are loaded (a load past them would touch the next cache
  // line for nothing); each keeps the text's bytes in it (min(n, 8i + 8) - min(n, 8i)).
  const std::size_t readable = static_cast<std::size_t>(end - text.data());
  std::array<std::uint64_t, 4> w{};
  std::uint64_t h = 0;
  if (n <= 16) [[likely]] {
    if (readable >= 16) [[likely]] {
      std::memcpy(w.data(), text.data(), 16);
    } else {  // near the end of the input: the same value from a copy
      std::memcpy(w.data(), text.data(), n);
    }
    h = mix((w[0] & kLowBytes[std::min<std::size_t>(n, 8)]) ^ seed ^ 0xa0761d6478bd642fULL,
            (w[1] & kLowBytes[n > 8 ? n - 8 : 0]) ^ n ^ 0xe7037ed1a0b428dbULL);
  } else {
    if (readable >= 32) [[likely]] {
      std::memcpy(w.data(), text.data(), 32);
    } else {
      std::memcpy(w.data(), text.data(), n);
    }
    h = mix(w[0] ^ seed ^ 0xa0761d6478bd642fULL, w[1] ^ n ^ 0xe7037ed1a0b428dbULL);
    h ^= mix((w[2] & kLowBytes[std::min<std::size_t>(n - 16, 8)]) ^ seed ^ 0x8ebc6af09c88c6e3ULL,
             (w[3] & kLowBytes[n > 24 ? n - 24 : 0]) ^ 0x1d8e4e27c47d124fULL);
  }
  return mix(h ^ 0x8ebc6af09c88c6e3ULL, seed ^ 0x589965cc75374cc3ULL);
}

[[gnu::always_inline]] inline GroupMatch match_group_inline(const std::uint32_t* group,
                                                            std::uint32_t tag,
                                                            std::uint32_t tag_bits) {
  GroupMatch out;
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi32(static_cast<int>(tag));
  const __m128i bits = _mm_set1_epi32(static_cast<int>(tag_bits));
  const __m128i zero = _mm_setzero_si128();
  for (unsigned q = 0; q < kGroup / 4; ++q) {
    const __m128i held = _mm_loadu_si128(reinterpret_cast<const __m128i*>(group + 4 * q));
    const auto empty =
        static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(held, zero))));
    const auto same = static_cast<unsigned>(
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(held, bits), want))));
    out.empty |= empty << (4 * q);
    out.tags |= (same & ~empty) << (4 * q);
  }
#else
  out = match_group_scalar(group, tag, tag_bits);
#endif
  return out;
}

}  // namespace

GroupMatch match_group(const std::uint32_t* group, std::uint32_t tag, std::uint32_t tag_bits) {
  return match_group_inline(group, tag, tag_bits);
}

GroupMatch match_group_scalar(const std::uint32_t* group, std::uint32_t tag,
                              std::uint32_t tag_bits) {
  GroupMatch out;
  for (unsigned i = 0; i < kGroup; ++i) {
    if (group[i] == kEmptySlot) {
      out.empty |= 1U << i;
    } else if ((group[i] & tag_bits) == tag) {
      out.tags |= 1U << i;
    }
  }
  return out;
}

namespace {

template <std::uint32_t Width, bool Swap>
[[gnu::always_inline]] inline std::uint64_t load_length(const char* at) {
  if constexpr (Width == 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, at, 8);
    return Swap ? __builtin_bswap64(v) : v;
  } else {
    std::uint32_t v = 0;
    std::memcpy(&v, at, 4);
    return Swap ? __builtin_bswap32(v) : v;
  }
}

}  // namespace

TokenIndex::TokenIndex(const Input& input, std::uint64_t first_element, std::uint64_t count,
                       std::uint32_t width, Endian endian, bool cut_at_nul,
                       const std::atomic<bool>* cancel, bool all_collide)
    : elements_offset(first_element),
      c_strings(cut_at_nul),
      input_(input),
      bytes_(input.prefix(input.size())),
      width_(width),
      endian_(endian) {
  all_collide_ = all_collide;
  build(count, cancel);
}

std::string_view TokenIndex::text_of(std::uint64_t j) const {
  const std::uint64_t length = input_.number_at(offsets_[j], width_, endian_).value_or(0);
  std::string_view bytes;
  if (!input_.view(offsets_[j] + width_, length, bytes)) return {};
  return c_strings ? c_string_prefix(bytes) : bytes;
}

bool TokenIndex::empty(std::uint64_t j) const {
  return j >= walked_ || text_of(j).empty();
}

// A text looked up need not lie in the input: hashed from a copy (the same value as the walk's).
std::uint64_t TokenIndex::hash(std::string_view text) const {
  if (all_collide_) return 0;
  return token_hash(text, text.data() + text.size(), seed_);
}

[[gnu::always_inline]] inline std::uint64_t TokenIndex::token_at(std::size_t slot) const {
  return (slots_[slot] & index_mask_) - 1;
}

std::uint32_t TokenIndex::tag_of(std::uint64_t hash) const {
  // The hash's low bits above the index: a probe compares texts only when the tags agree.
  return static_cast<std::uint32_t>(hash << index_bits_) & ~index_mask_;
}

std::size_t TokenIndex::group_of(std::uint64_t hash) const {
  // Multiply-shift of the hash's high bits: any number of groups, not only powers of two.
  return static_cast<std::size_t>((static_cast<Wide>(hash) * groups_) >> 64);
}

void TokenIndex::build(std::uint64_t count, const std::atomic<bool>* cancel) {
  static const std::uint64_t seed = seeded_hash("ggufcheck token hash");
  seed_ = seed;
  count_ = count;
  if (elements_offset > bytes_.size()) return;
  // Memory follows the tokens that fit in the input, never the count alone.
  const std::uint64_t fitting =
      std::min<std::uint64_t>(count, (bytes_.size() - elements_offset) / width_);
  // Above 2^31 tokens a slot cannot hold the index: the ordered map from the start.
  index_bits_ = static_cast<unsigned>(std::bit_width(fitting));
  ordered_mode_ = index_bits_ >= 32;
  index_mask_ = ordered_mode_ ? 0 : (std::uint32_t{1} << index_bits_) - 1;
  if (!ordered_mode_) {
    groups_ = std::max<std::uint64_t>(1, (2 * fitting + kGroup - 1) / kGroup);
    slots_ = TableMemory<std::uint32_t>(groups_ * kGroup);
    if (!slots_.zeroed()) std::fill_n(slots_.data(), slots_.size(), kEmptySlot);
  }
  offsets_ = TableMemory<std::uint64_t>(fitting);
  const bool swap = endian_ != Endian::Little;
  if (width_ == 8) {
    swap ? walk<8, true>(fitting, cancel) : walk<8, false>(fitting, cancel);
  } else {
    swap ? walk<4, true>(fitting, cancel) : walk<4, false>(fitting, cancel);
  }
  complete = walked_ == count;
}

template <std::uint32_t Width, bool Swap>
void TokenIndex::walk(std::uint64_t fitting, const std::atomic<bool>* cancel) {
  const char* const bytes = bytes_.data();
  const std::uint64_t size = bytes_.size();
  const char* const end = bytes + size;
  std::uint64_t* const offsets = offsets_.data();
  // Slots are fetched a few tokens ahead of their insert: with 262,144 tokens the table outgrows
  // the cache, and a miss per token would cost more than the rest of the walk.
  constexpr std::size_t kAhead = 32;
  constexpr std::uint64_t kReadAhead = 1024;
  struct Pending {
    std::string_view text;
    std::size_t group = 0;
    std::uint32_t tag = 0;
  };
  std::array<Pending, kAhead> pending{};
  std::uint64_t walked = 0;
  std::uint64_t at = elements_offset;
  for (std::uint64_t j = 0; j < fitting; ++j) {
    if ((j & 4095) == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) break;
    if (Width > size - at) break;
    // The texts a few cache lines ahead, as the reader does: the walk's next address depends on
    // this token's length, so the processor cannot run ahead by itself.
    if (kReadAhead < size - at) __builtin_prefetch(bytes + at + kReadAhead);
    const std::uint64_t length = load_length<Width, Swap>(bytes + at);
    if (length > size - at - Width) break;
    std::string_view text(bytes + at + Width, length);
    if (c_strings) text = c_string_prefix(text);
    offsets[walked++] = at;
    at += Width + length;
    Pending p{text};
    if (!text.empty() && !ordered_mode_) {
      const std::uint64_t h = all_collide_ ? 0 : token_hash(text, end, seed_);
      p.group = group_of(h);
      p.tag = tag_of(h);
      __builtin_prefetch(slots_.data() + p.group * kGroup);
    }
    if (j >= kAhead)
      insert(j - kAhead, pending[j % kAhead].text, pending[j % kAhead].group,
             pending[j % kAhead].tag);
    pending[j % kAhead] = p;
  }
  walked_ = walked;
  for (std::uint64_t j = walked > kAhead ? walked - kAhead : 0; j < walked; ++j) {
    insert(j, pending[j % kAhead].text, pending[j % kAhead].group, pending[j % kAhead].tag);
  }
}

// The probe sequence of text from its first group: the slot holding an equal text (found), or
// else the empty slot it would take; kNoSlot when kMaxGroups groups are full.
[[gnu::always_inline]] inline TokenIndex::Probe TokenIndex::probe(std::string_view text,
                                                                  std::size_t group,
                                                                  std::uint32_t tag) const {
  const std::uint32_t* const slots = slots_.data();
  for (std::size_t probes = 0; probes < kMaxGroups; ++probes) {
    const std::size_t first = group * kGroup;
    const GroupMatch match = match_group_inline(slots + first, tag, ~index_mask_);
    // An equal text is in this group or none: groups fill and never empty, so while this one
    // has an empty slot no text of this group went further.
    for (std::uint32_t tags = match.tags; tags != 0; tags &= tags - 1) {
      const std::size_t slot = first + static_cast<std::size_t>(std::countr_zero(tags));
      if (text_of(token_at(slot)) == text) [[unlikely]]
        return {true, slot};
    }
    if (match.empty != 0) [[likely]] {
      return {false, first + static_cast<std::size_t>(std::countr_zero(match.empty))};
    }
    if (++group == groups_) group = 0;
  }
  return {false, kNoSlot};
}

// Token j's text, whose first group and tag were computed (unless the table had already fallen
// back to the ordered map).
[[gnu::always_inline]] inline void TokenIndex::insert(std::uint64_t j, std::string_view text,
                                                      std::size_t group, std::uint32_t tag) {
  if (text.empty()) return;
  if (ordered_mode_) [[unlikely]] {
    insert_ordered(j, text);
    return;
  }
  const Probe probed = probe(text, group, tag);
  if (probed.found) [[unlikely]] {
    duplicates.emplace_back(j, token_at(probed.slot));
  } else if (probed.slot == kNoSlot) [[unlikely]] {
    fall_back_to_ordered(j, text);
  } else {
    slots_[probed.slot] = tag | static_cast<std::uint32_t>(j + 1);
    if (text[0] == '[') [[unlikely]]
      lookalike(j, text);
  }
}

// A probe sequence of kMaxGroups full groups: every distinct text so far is in one slot with its
// first token, and goes to the ordered map, which takes this text and every later one.
[[gnu::noinline]] void TokenIndex::fall_back_to_ordered(std::uint64_t j, std::string_view text) {
  ordered_mode_ = true;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i] != kEmptySlot) ordered_.try_emplace(text_of(token_at(i)), token_at(i));
  }
  slots_ = TableMemory<std::uint32_t>();
  insert_ordered(j, text);
}

void TokenIndex::lookalike(std::uint64_t j, std::string_view text) {
  if (const auto k = empty_token_index(text); k && *k < count_) lookalikes.emplace_back(j, *k);
}

void TokenIndex::insert_ordered(std::uint64_t j, std::string_view text) {
  const auto [it, inserted] = ordered_.try_emplace(text, j);
  if (!inserted) {
    duplicates.emplace_back(j, it->second);
  } else if (text[0] == '[') {
    lookalike(j, text);
  }
}

std::optional<std::uint64_t> TokenIndex::find(std::string_view text) const {
  if (text.empty()) return std::nullopt;
  if (ordered_mode_) {
    const auto it = ordered_.find(text);
    if (it == ordered_.end()) return std::nullopt;
    return it->second;
  }
  if (slots_.size() == 0) return std::nullopt;
  const std::uint64_t h = hash(text);
  // Not found at an empty slot, or after kMaxGroups full groups: no insert probed further
  // without switching to the ordered map.
  const Probe probed = probe(text, group_of(h), tag_of(h));
  if (!probed.found) return std::nullopt;
  return token_at(probed.slot);
}

TokenIndexTask::TokenIndexTask(const Input& input, std::uint64_t array_offset,
                               std::uint64_t elements_offset, std::uint64_t count,
                               std::uint32_t width, Endian endian)
    : array_offset_(array_offset) {
  thread_ = std::thread([this, input, elements_offset, count, width, endian] {
    try {
      index_.emplace(input, elements_offset, count, width, endian, false, &cancel_);
    } catch (...) {  // out of memory: the check indexes inline, and fails there if it must
      index_.reset();
    }
  });
}

TokenIndexTask::~TokenIndexTask() {
  cancel_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

const TokenIndex* TokenIndexTask::get(std::uint64_t array_offset) {
  if (thread_.joinable()) thread_.join();
  if (array_offset != array_offset_ || !index_) return nullptr;
  return &*index_;
}

void start_token_index(Model& model, std::string_view key, std::uint64_t array_offset,
                       std::uint64_t elements_offset, std::uint64_t count) {
  if (c_string_prefix(key) != "tokenizer.ggml.tokens" || model.token_index ||
      count < kThreadMinimum)
    return;
  if (model.dialect != Dialect{}) return;  // writer diagnosis re-reads: no model checks follow
  try {
    model.token_index = std::make_shared<TokenIndexTask>(model.input, array_offset, elements_offset,
                                                         count, model.size_width(), model.endian);
  } catch (const std::system_error&) {  // no thread to be had: the check indexes inline
  }
}

}  // namespace ggufcheck::detail
