#include "templates/known_templates.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include "util/digest.hpp"

namespace ggufcheck::detail {
namespace {

// The table is checked while it compiles: a digest that is not 64 hex digits, or a literal whose
// length is not the one the generator counted, is not a constant expression.
constexpr std::uint8_t hex_value(char c) {
  if (c >= '0' && c <= '9') return static_cast<std::uint8_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<std::uint8_t>(c - 'a' + 10);
  throw std::logic_error("known_templates.inc: a SHA-256 digit is not lower-case hex");
}

constexpr std::array<std::uint8_t, 32> digest_from_hex(std::string_view hex) {
  if (hex.size() != 64) throw std::logic_error("known_templates.inc: a SHA-256 is not 64 digits");
  std::array<std::uint8_t, 32> digest{};
  for (std::size_t i = 0; i < digest.size(); ++i) {
    digest[i] = static_cast<std::uint8_t>(hex_value(hex[2 * i]) << 4 | hex_value(hex[2 * i + 1]));
  }
  return digest;
}

// The literal's bytes, NULs included: its size, not strlen.
template <std::size_t N>
constexpr std::string_view literal_text(const char (&literal)[N], std::size_t size) {
  if (N - 1 != size) throw std::logic_error("known_templates.inc: a text's length differs");
  return {literal, N - 1};
}

#define GGUFCHECK_KNOWN_TEMPLATES_VERSION(version, commit)
#define GGUFCHECK_KNOWN_TEMPLATE(name, source, size, sha256, text) \
  KnownTemplate{name, source, literal_text(text, size), digest_from_hex(sha256)},
constexpr KnownTemplate kKnownTemplates[] = {
#include "templates/generated/known_templates.inc"
};
#undef GGUFCHECK_KNOWN_TEMPLATE
#undef GGUFCHECK_KNOWN_TEMPLATES_VERSION

#define GGUFCHECK_KNOWN_TEMPLATE(name, source, size, sha256, text)
#define GGUFCHECK_KNOWN_TEMPLATES_VERSION(version, commit) \
  constexpr std::string_view kVersion = version;           \
  constexpr std::string_view kCommit = commit;
#include "templates/generated/known_templates.inc"
#undef GGUFCHECK_KNOWN_TEMPLATE
#undef GGUFCHECK_KNOWN_TEMPLATES_VERSION

// A line: its bytes, '\n' included when it has one, and a hash that rules most unequal lines
// out before their bytes are compared.
struct Line {
  std::uint64_t hash = 0;
  std::size_t begin = 0;
  std::size_t size = 0;
};

std::uint64_t line_hash(const char* data, std::size_t size) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ULL ^ size;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, data + i, 8);
    hash = (hash ^ word) * 0xff51afd7ed558ccdULL;
    hash ^= hash >> 32;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, data + i, size - i);
  hash = (hash ^ tail) * 0xc4ceb9fe1a85ec53ULL;
  return hash ^ (hash >> 29);
}

std::size_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  const auto newlines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return newlines + (text.back() == '\n' ? 0 : 1);
}

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  lines.reserve(count_lines(text));
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t newline = text.find('\n', begin);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back({line_hash(text.data() + begin, end - begin), begin, end - begin});
    begin = end;
  }
  return lines;
}

// The known templates' lines, split once.
const std::vector<std::vector<Line>>& known_lines() {
  static const std::vector<std::vector<Line>> lines = [] {
    std::vector<std::vector<Line>> all;
    all.reserve(std::size(kKnownTemplates));
    for (const KnownTemplate& known : kKnownTemplates) all.push_back(split_lines(known.text));
    return all;
  }();
  return lines;
}

struct Lines {
  std::string_view text;
  const std::vector<Line>& lines;

  [[nodiscard]] std::string_view line(std::size_t i) const {
    return text.substr(lines[i].begin, lines[i].size);
  }
};

// One edit of the script: a line of the template removed or a line of the text added, at the
// point (x, y) of the edit graph (template line x, text line y) where the edit starts.
struct Edit {
  bool added = false;
  std::size_t x = 0;
  std::size_t y = 0;
};

class Differ {
 public:
  Differ(Lines known, Lines text, std::size_t* comparisons)
      : known_(known), text_(text), comparisons_(comparisons) {}

  // The shortest edit script, if it has at most max_edits edits. Myers' greedy algorithm over
  // what is left once the common first and last lines are set aside: round d finds, on each
  // diagonal, how far a script of d edits reaches, so it stops after max_edits rounds having
  // compared O((N + M) * max_edits) lines.
  std::optional<std::vector<Edit>> diff(std::size_t max_edits) {
    const std::size_t m_all = known_.lines.size();
    const std::size_t n_all = text_.lines.size();
    std::size_t prefix = 0;
    while (prefix < m_all && prefix < n_all && same(prefix, prefix)) ++prefix;
    std::size_t suffix = 0;
    while (suffix < m_all - prefix && suffix < n_all - prefix &&
           same(m_all - 1 - suffix, n_all - 1 - suffix)) {
      ++suffix;
    }
    offset_ = prefix;
    m_ = m_all - prefix - suffix;
    n_ = n_all - prefix - suffix;
    const std::size_t lower_bound = m_ > n_ ? m_ - n_ : n_ - m_;
    if (lower_bound > max_edits) return std::nullopt;

    // v[k + max_edits + 1]: the furthest x on diagonal k = x - y; one copy per round to trace
    // the script back.
    const auto d_max = static_cast<std::ptrdiff_t>(max_edits);
    const auto width = static_cast<std::size_t>(2 * d_max + 3);
    std::vector<std::ptrdiff_t> v(width, 0);
    std::vector<std::vector<std::ptrdiff_t>> trace;
    const auto at = [&](std::ptrdiff_t k) -> std::ptrdiff_t& {
      return v[static_cast<std::size_t>(k + d_max + 1)];
    };
    const auto m = static_cast<std::ptrdiff_t>(m_);
    const auto n = static_cast<std::ptrdiff_t>(n_);
    for (std::ptrdiff_t d = 0; d <= d_max; ++d) {
      for (std::ptrdiff_t k = -d; k <= d; k += 2) {
        std::ptrdiff_t x =
            (k == -d || (k != d && at(k - 1) < at(k + 1))) ? at(k + 1) : at(k - 1) + 1;
        std::ptrdiff_t y = x - k;
        while (x < m && y < n &&
               same(offset_ + static_cast<std::size_t>(x), offset_ + static_cast<std::size_t>(y))) {
          ++x;
          ++y;
        }
        at(k) = x;
        if (x >= m && y >= n) {
          trace.push_back(v);
          return trace_back(trace, k);
        }
      }
      trace.push_back(v);
    }
    return std::nullopt;
  }

 private:
  bool same(std::size_t x, std::size_t y) {
    ++*comparisons_;
    const Line& a = known_.lines[x];
    const Line& b = text_.lines[y];
    return a.hash == b.hash && a.size == b.size &&
           std::memcmp(known_.text.data() + a.begin, text_.text.data() + b.begin, a.size) == 0;
  }

  // From the end point back through the rounds: each round's edit is the move into the
  // diagonal the next round continued from.
  std::vector<Edit> trace_back(const std::vector<std::vector<std::ptrdiff_t>>& trace,
                               std::ptrdiff_t k) const {
    const auto d_max = static_cast<std::ptrdiff_t>((trace.front().size() - 3) / 2);
    const auto at = [&](const std::vector<std::ptrdiff_t>& v, std::ptrdiff_t diagonal) {
      return v[static_cast<std::size_t>(diagonal + d_max + 1)];
    };
    std::vector<Edit> edits;
    for (auto d = static_cast<std::ptrdiff_t>(trace.size()) - 1; d > 0; --d) {
      const std::vector<std::ptrdiff_t>& before = trace[static_cast<std::size_t>(d - 1)];
      const bool added = k == -d || (k != d && at(before, k - 1) < at(before, k + 1));
      const std::ptrdiff_t from = added ? k + 1 : k - 1;
      const std::ptrdiff_t x = at(before, from);
      edits.push_back({added, offset_ + static_cast<std::size_t>(x),
                       offset_ + static_cast<std::size_t>(x - from)});
      k = from;
    }
    std::reverse(edits.begin(), edits.end());
    return edits;
  }

  Lines known_;
  Lines text_;
  std::size_t* comparisons_;
  std::size_t offset_ = 0;
  std::size_t m_ = 0;
  std::size_t n_ = 0;
};

std::string cut_line(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (line.size() <= kDiffLineBytes) return std::string(line);
  std::size_t cut = kDiffLineBytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return std::string(line.substr(0, cut)) + "...";
}

void add_diff_line(std::vector<std::string>& head, char prefix, std::string_view line) {
  head.push_back(prefix + cut_line(line));
  if (line.empty() || line.back() != '\n') head.emplace_back("\\ No newline at end of file");
}

// The first hunk (the edits up to the first line the two share again) as a unified diff's lines.
std::vector<std::string> diff_head(Lines known, Lines text, const std::vector<Edit>& edits) {
  std::vector<std::size_t> removed;
  std::vector<std::size_t> added;
  std::size_t x = edits.front().x;
  std::size_t y = edits.front().y;
  for (const Edit& edit : edits) {
    if (edit.x != x || edit.y != y) break;  // a common line before this edit: the hunk ended
    if (edit.added) {
      added.push_back(edit.y);
      ++y;
    } else {
      removed.push_back(edit.x);
      ++x;
    }
  }
  std::vector<std::string> head;
  const std::size_t first = edits.front().x;
  if (first > 0) add_diff_line(head, ' ', known.line(first - 1));
  const std::size_t shown_removed =
      added.empty() ? removed.size() : std::min<std::size_t>(2, removed.size());
  for (std::size_t i = 0; i < shown_removed; ++i) add_diff_line(head, '-', known.line(removed[i]));
  for (std::size_t line : added) add_diff_line(head, '+', text.line(line));
  if (x < known.lines.size()) add_diff_line(head, ' ', known.line(x));
  if (head.size() > kDiffHeadLines) head.resize(kDiffHeadLines);
  return head;
}

}  // namespace

std::span<const KnownTemplate> known_templates() {
  return kKnownTemplates;
}

std::string_view known_templates_version() {
  return kVersion;
}

std::string_view known_templates_commit() {
  return kCommit;
}

std::array<std::uint8_t, 32> template_sha256(std::string_view text) {
  return sha256_of(text.data(), text.size());
}

const KnownTemplate* find_identical(std::string_view text) {
  for (const KnownTemplate& known : kKnownTemplates) {
    if (known.text == text) return &known;  // compares bytes only when the sizes agree
  }
  return nullptr;
}

std::vector<const KnownTemplate*> find_all_identical(std::string_view text) {
  std::vector<const KnownTemplate*> found;
  for (const KnownTemplate& known : kKnownTemplates) {
    if (known.text == text) found.push_back(&known);
  }
  return found;
}

NearBound near_bound(std::size_t lines, std::size_t bytes) {
  return {std::clamp<std::size_t>(lines / 10, 2, 20), std::max<std::size_t>(1024, bytes / 10)};
}

std::optional<NearMatch> find_near(std::string_view text, NearSearchWork* work) {
  NearSearchWork local_work;
  NearSearchWork& done = work != nullptr ? *work : local_work;
  done = {};
  const std::vector<std::vector<Line>>& all_lines = known_lines();

  // The size filter first: a text no template is within reach of is never read.
  const auto size_within = [&](std::size_t i) {
    const KnownTemplate& known = kKnownTemplates[i];
    const std::size_t apart = known.text.size() > text.size() ? known.text.size() - text.size()
                                                              : text.size() - known.text.size();
    return apart <= near_bound(all_lines[i].size(), known.text.size()).max_changed_bytes;
  };
  bool any_within = false;
  for (std::size_t i = 0; i < std::size(kKnownTemplates) && !any_within; ++i)
    any_within = size_within(i);
  if (!any_within || find_identical(text) != nullptr) return std::nullopt;

  done.text_read = true;
  const std::vector<Line> text_lines = split_lines(text);
  std::optional<NearMatch> best;
  for (std::size_t i = 0; i < std::size(kKnownTemplates); ++i) {
    const KnownTemplate& known = kKnownTemplates[i];
    const std::vector<Line>& lines = all_lines[i];
    const NearBound bound = near_bound(lines.size(), known.text.size());
    // A later candidate must do at least as well as the best so far (ties go to fewer bytes).
    const std::size_t max_edits =
        best ? std::min(bound.max_line_edits, best->line_edits()) : bound.max_line_edits;
    const std::size_t lines_apart = lines.size() > text_lines.size()
                                        ? lines.size() - text_lines.size()
                                        : text_lines.size() - lines.size();
    if (!size_within(i) || lines_apart > max_edits) continue;
    ++done.candidates;
    const Lines known_side{known.text, lines};
    const Lines text_side{text, text_lines};
    Differ differ(known_side, text_side, &done.line_comparisons);
    const std::optional<std::vector<Edit>> edits = differ.diff(max_edits);
    if (!edits || edits->empty()) continue;
    NearMatch match;
    match.known = &known;
    for (const Edit& edit : *edits) {
      if (edit.added) {
        ++match.lines_added;
        match.bytes_added += text_lines[edit.y].size;
      } else {
        ++match.lines_removed;
        match.bytes_removed += lines[edit.x].size;
      }
    }
    if (match.bytes_removed + match.bytes_added > bound.max_changed_bytes ||
        match.bytes_removed > known.text.size() / 2) {
      continue;
    }
    if (best &&
        (match.line_edits() > best->line_edits() ||
         (match.line_edits() == best->line_edits() &&
          match.bytes_removed + match.bytes_added >= best->bytes_removed + best->bytes_added))) {
      continue;
    }
    match.first_known_line = edits->front().x + 1;
    match.first_text_line = edits->front().y + 1;
    match.diff_head = diff_head(known_side, text_side, *edits);
    best = std::move(match);
  }
  return best;
}

}  // namespace ggufcheck::detail
