// The chat-template checks (GGUF9001-GGUF9016): every tokenizer.chat_template,
// tokenizer.chat_template.<name> and tokenizer.chat_templates (each also with a NUL byte and more
// after it, as llama.cpp reads keys as C strings; each string of an array-typed one too) read by
// jinja.hpp's reader, then walked once for code-execution paths, engine hazards and poisoning
// signals.
// general.* strings are searched for invisible characters.
//
// Cost: linear in the templates' bytes, and bounded. Every step is counted in work units
// (jinja::Work): the reader's tokens and nodes, one per node of the walk and per call of the
// helpers that read a subtree (each subtree read a bounded number of times: what several checks
// ask of every node, which names it mentions and the prose it emits, is computed once per
// template, kids before parents), one per kBytesPerUnit bytes a text search reads, the line
// comparisons of the near-known search. One budget spans the templates of a file
// (template_work_budget); past it the stage stops and reports GGUF0002.
#include "templates/template_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "index/values.hpp"
#include "templates/jinja.hpp"
#include "templates/known_templates.hpp"

namespace ggufcheck::detail {

namespace {

using jinja::Node;
using jinja::NodeKind;
using jinja::Program;

constexpr std::string_view kTemplateKey = "tokenizer.chat_template";
// Findings of one code in one template beyond this many are not reported: one is enough to fail
// the file, a few show the pattern, thousands would bury the report.
constexpr std::size_t kMaxFindingsPerCode = 8;
// A constant string the checks fold (a name built from literals) is followed this far.
constexpr std::size_t kMaxFolded = 256;
constexpr std::size_t kMaxConstants = 4096;
// range() bounds a literal may give without counting as unbounded.
constexpr std::uint64_t kMaxLiteralRange = 10'000;
// Words of prose before text outside the message loop, or in a content branch, counts.
constexpr std::size_t kProseWords = 5;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Names on the way from a template object to Python's internals or to the operating system.
bool dangerous_name(std::string_view name) {
  static const std::unordered_set<std::string_view> kNames = {"__globals__",   "__builtins__",
                                                              "__import__",    "__subclasses__",
                                                              "__mro__",       "__base__",
                                                              "__bases__",     "__class__",
                                                              "__init__",      "__dict__",
                                                              "__code__",      "__func__",
                                                              "__self__",      "__getattribute__",
                                                              "__reduce__",    "__reduce_ex__",
                                                              "func_globals",  "f_globals",
                                                              "gi_frame",      "tb_frame",
                                                              "f_back",        "os",
                                                              "subprocess",    "popen",
                                                              "eval",          "exec",
                                                              "import_module", "builtins",
                                                              "sys",           "getattr",
                                                              "spawn",         "check_output",
                                                              "__loader__",    "gi_code",
                                                              "gi_yieldfrom",  "f_locals",
                                                              "f_builtins",    "f_code",
                                                              "cr_frame",      "ag_frame",
                                                              "tb_next",       "co_consts"};
  return kNames.contains(name);
}

// Globals of Jinja2 (and Flask) whose attributes lead to Python's globals.
bool gadget_name(std::string_view name) {
  static const std::unordered_set<std::string_view> kNames = {"lipsum",
                                                              "cycler",
                                                              "joiner",
                                                              "namespace",
                                                              "self",
                                                              "request",
                                                              "config",
                                                              "url_for",
                                                              "get_flashed_messages",
                                                              "_TemplateReference__context",
                                                              "range",
                                                              "dict"};
  return kNames.contains(name);
}

// Filters that build a string from their operand.
bool string_building_filter(std::string_view name) {
  static const std::unordered_set<std::string_view> kNames = {
      "join",   "format", "replace", "reverse", "lower", "upper",    "title",     "capitalize",
      "string", "trim",   "first",   "last",    "list",  "center",   "urlencode", "striptags",
      "safe",   "e",      "escape",  "default", "d",     "wordwrap", "truncate",  "join_attr"};
  return kNames.contains(name);
}

// Byte offsets of line starts, built when a finding first needs a line number.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}
  [[nodiscard]] bool built() const { return !starts_.empty(); }
  jinja::LineColumn at(std::uint32_t position) {
    if (starts_.empty()) {
      starts_.push_back(0);
      for (std::size_t i = 0; i < text_.size(); ++i) {
        if (text_[i] == '\n') starts_.push_back(static_cast<std::uint32_t>(i + 1));
      }
    }
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), position);
    const auto line = static_cast<std::uint32_t>(it - starts_.begin());
    return {line, position - starts_[line - 1] + 1};
  }

 private:
  std::string_view text_;
  std::vector<std::uint32_t> starts_;
};

// Decodes one UTF-8 sequence at text[i] (lenient: a bad byte is one code point of its own).
char32_t decode(std::string_view text, std::size_t& i) {
  const auto b = static_cast<unsigned char>(text[i]);
  std::size_t n = b < 0x80           ? 1
                  : (b >> 5) == 0x6  ? 2
                  : (b >> 4) == 0xE  ? 3
                  : (b >> 3) == 0x1E ? 4
                                     : 1;
  if (i + n > text.size()) n = 1;
  char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    const auto cont = static_cast<unsigned char>(text[i + k]);
    if ((cont & 0xC0) != 0x80) {
      n = 1;
      c = b;
      break;
    }
    c = (c << 6) | (cont & 0x3F);
  }
  i += n;
  return c;
}

bool invisible(char32_t c) {
  return (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF ||
         c == 0x061C || c == 0x180E || c == 0x00AD || c == 0x115F || c == 0x1160 || c == 0x3164 ||
         c == 0xFFA0 || (c >= 0xE0000 && c <= 0xE007F);
}

// The first invisible character of a text: its offset, the code point and how many there are.
struct InvisibleRun {
  std::size_t offset = 0;
  char32_t first = 0;
  std::size_t count = 0;
};
InvisibleRun find_invisible(std::string_view text) {
  InvisibleRun run;
  // A U+FEFF that starts the string is a byte order mark: GGUF9505 reports it (parsers differ
  // on it), this check what hides inside the text.
  const std::size_t start = text.substr(0, 3) == "\xef\xbb\xbf" ? 3 : 0;
  for (std::size_t i = start; i < text.size();) {
    const std::size_t at = i;
    if (static_cast<unsigned char>(text[i]) < 0xC2) {
      ++i;
      continue;
    }
    const char32_t c = decode(text, i);
    if (invisible(c)) {
      if (run.count == 0) {
        run.offset = at;
        run.first = c;
      }
      ++run.count;
    }
  }
  return run;
}

bool cyrillic_or_greek(char32_t c) {
  return (c >= 0x0370 && c <= 0x03FF) || (c >= 0x0400 && c <= 0x04FF);
}
bool ascii_letter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// A word mixing Latin letters with Cyrillic or Greek ones (`аssistant` with a Cyrillic а): its
// offset and length.
std::optional<ByteRange> find_mixed_script_word(std::string_view text) {
  std::size_t word_start = 0;
  bool latin = false;
  bool other = false;
  for (std::size_t i = 0; i <= text.size();) {
    const std::size_t at = i;
    const char32_t c = i < text.size() ? decode(text, i) : U' ';
    if (i == at) ++i;
    if (ascii_letter(c) || cyrillic_or_greek(c)) {
      if (!latin && !other) word_start = at;
      latin = latin || ascii_letter(c);
      other = other || cyrillic_or_greek(c);
      continue;
    }
    if (latin && other) return ByteRange{word_start, at - word_start};
    latin = other = false;
    if (at >= text.size()) break;
  }
  return std::nullopt;
}

// Words of prose in a text, markup taken out: <...>, [...], <|...|>, {...} and role names are
// scaffolding, not prose.
std::size_t prose_words(std::string_view text) {
  std::size_t words = 0;
  int markup = 0;
  std::size_t letters = 0;
  const auto end_word = [&] {
    if (letters >= 2 && markup == 0) ++words;
    letters = 0;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '[' || c == '{') {
      end_word();
      ++markup;
    } else if ((c == '>' || c == ']' || c == '}') && markup > 0) {
      end_word();
      --markup;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               static_cast<unsigned char>(c) >= 0x80) {
      ++letters;
    } else {
      end_word();
    }
  }
  end_word();
  return words;
}

std::optional<std::size_t> find_url(std::string_view text) {
  for (const std::string_view scheme : {"https://", "http://", "ftp://", "file://", "data:"}) {
    std::size_t at = text.find(scheme);
    while (at != std::string_view::npos) {
      // data: only as a data URL (data:text/..., data:application/...;base64)
      if (scheme != "data:" || text.substr(at + 5, 5) == "text/" ||
          text.substr(at + 5, 12) == "application/" || text.substr(at + 5, 6) == "image/") {
        return at;
      }
      at = text.find(scheme, at + 1);
    }
  }
  return std::nullopt;
}

// A base64 run of 64 characters or more with digits and both letter cases.
std::optional<ByteRange> find_base64(std::string_view text) {
  std::size_t start = 0;
  std::size_t run = 0;
  bool digit = false, upper = false, lower = false;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    const bool b64 = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '+' || c == '/' || c == '=' || c == '-' || c == '_';
    if (b64) {
      if (run == 0) {
        start = i;
        digit = upper = lower = false;
      }
      ++run;
      digit = digit || (c >= '0' && c <= '9');
      upper = upper || (c >= 'A' && c <= 'Z');
      lower = lower || (c >= 'a' && c <= 'z');
      continue;
    }
    if (run >= 64 && digit && upper && lower) return ByteRange{start, run};
    run = 0;
  }
  return std::nullopt;
}

std::string escape_code_point(char32_t c) {
  return fmt::format("U+{:04X}", static_cast<std::uint32_t>(c));
}

// One template: its program and the walk over it.
class TemplateScan {
 public:
  TemplateScan(std::string_view source, std::uint64_t file_offset, Field field, Sink& sink,
               jinja::Work& work)
      : source_(source),
        base_(file_offset),
        field_(std::move(field)),
        sink_(sink),
        work_(&work),
        lines_(source) {}

  // False when the work budget ran out: the template was not read to the end, and nothing was
  // reported after that point.
  bool run() {
    program_ = jinja::parse(source_, work_);
    if (work_->exhausted()) return false;
    provenance();
    if (work_->exhausted()) return false;
    walk();
    if (work_->exhausted()) return false;
    engine_findings();
    text_findings();
    return !work_->exhausted();
  }

  // The words of prose a template emits outside the message loop whatever the messages (the
  // measure of GGUF9009), without reporting anything.
  std::size_t hidden_prose_words() {
    quiet_ = true;
    program_ = jinja::parse(source_, work_);
    walk();
    return hidden_prose_words_;
  }

 private:
  struct MacroCall {
    std::string_view callee;
    std::uint32_t position;
    bool structural;  // passes a part of its data on (see note_macro_call)
  };
  struct Macro {
    std::string_view name;
    std::uint32_t position;
    std::vector<MacroCall> calls;
    std::vector<std::string_view> params;
  };

  template <typename... Args>
  void report(Code code, std::uint32_t position, std::uint64_t length, std::string_view hint,
              fmt::format_string<Args...> format, Args&&... args) {
    // Past the budget the helpers give up with "nothing found": no finding may rest on that.
    if (quiet_ || work_->exhausted()) return;
    std::size_t& count = counts_[code];
    if (count++ >= kMaxFindingsPerCode || !sink_.enabled(code)) return;
    if (!lines_.built()) spend_bytes(source_.size());
    const jinja::LineColumn at = lines_.at(position);
    sink_.report(code, base_ + position, std::max<std::uint64_t>(length, 1), field_, hint,
                 "{} (template line {}, column {})",
                 fmt::format(format, std::forward<Args>(args)...), at.line, at.column);
  }

  const Node& node(std::uint32_t i) const { return program_.nodes[i]; }
  std::uint32_t kid(const Node& n, std::uint32_t k) const { return program_.kid(n, k); }

  // Work: false once the budget is spent (the callers then give up with "nothing found").
  bool spend(std::uint64_t units = 1) const { return work_->spend(units); }
  bool spend_bytes(std::uint64_t bytes) const { return work_->spend_bytes(bytes); }

  // ------------------------------------------------------------------ constant folding ---
  // The string an expression makes from literals alone (and from names set to such strings),
  // or nothing when it depends on data or grows beyond kMaxFolded.
  std::optional<std::string> fold(std::uint32_t index, int budget = 64) const {
    if (budget <= 0 || !spend()) return std::nullopt;
    const Node& n = node(index);
    switch (n.kind) {
      case NodeKind::String: return std::string(n.value.substr(0, kMaxFolded));
      case NodeKind::Identifier: {
        const auto it = constants_.find(n.value);
        if (it != constants_.end()) return it->second;
        return std::nullopt;
      }
      case NodeKind::Binary: {
        if (n.value != "~" && n.value != "+") return std::nullopt;
        auto left = fold(kid(n, 0), budget - 1);
        if (!left) return std::nullopt;
        auto right = fold(kid(n, 1), budget - 1);
        if (!right) return std::nullopt;
        *left += *right;
        if (left->size() > kMaxFolded) left->resize(kMaxFolded);
        return left;
      }
      case NodeKind::List: {
        std::string all;
        for (std::uint32_t k = 0; k < n.kid_count; ++k) {
          auto part = fold(kid(n, k), budget - 1);
          if (!part) return std::nullopt;
          all += *part;
          if (all.size() > kMaxFolded) return std::nullopt;
        }
        return all;  // only meaningful under |join
      }
      case NodeKind::Filter: {
        if (n.kid_count == 0) return std::nullopt;
        auto operand = fold(kid(n, 0), budget - 1);
        if (!operand) return std::nullopt;
        if (n.value == "join" || n.value == "string" || n.value == "trim" || n.value == "safe") {
          return operand;
        }
        if (n.value == "reverse") {
          std::reverse(operand->begin(), operand->end());
          return operand;
        }
        if (n.value == "lower" || n.value == "upper") {
          for (char& c : *operand) {
            c = n.value == "lower" ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                                   : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          }
          return operand;
        }
        if (n.value == "replace" && n.kid_count >= 3) {
          auto from = fold(kid(n, 1), budget - 1);
          auto to = fold(kid(n, 2), budget - 1);
          if (!from || !to || from->empty()) return std::nullopt;
          std::string out;
          std::size_t pos = 0;
          for (std::size_t at = operand->find(*from); at != std::string::npos;
               at = operand->find(*from, pos)) {
            out.append(*operand, pos, at - pos);
            out += *to;
            pos = at + from->size();
            if (out.size() > kMaxFolded) return std::nullopt;
          }
          out.append(*operand, pos);
          return out;
        }
        if (n.value == "format") {
          // '%s...%s'|format(a, b): each %s takes the next argument.
          std::string out;
          std::uint32_t arg = 1;
          for (std::size_t i = 0; i < operand->size(); ++i) {
            if ((*operand)[i] == '%' && i + 1 < operand->size() && (*operand)[i + 1] == 's') {
              if (arg >= n.kid_count) return std::nullopt;
              auto value = fold(kid(n, arg++), budget - 1);
              if (!value) return std::nullopt;
              out += *value;
              ++i;
            } else {
              out += (*operand)[i];
            }
            if (out.size() > kMaxFolded) return std::nullopt;
          }
          return out;
        }
        return std::nullopt;
      }
      case NodeKind::Subscript: {
        // 'ssalc__'[::-1] and other slices of a literal
        const Node& slice = node(kid(n, 1));
        if (slice.kind != NodeKind::Slice) return std::nullopt;
        auto operand = fold(kid(n, 0), budget - 1);
        if (!operand) return std::nullopt;
        const Node& step = node(kid(slice, 2));
        if (step.kind == NodeKind::Number || (step.kind == NodeKind::Unary && step.value == "-")) {
          if (step.kind == NodeKind::Unary) std::reverse(operand->begin(), operand->end());
        }
        return operand;  // start and stop are not applied: the letters are what matters
      }
      default: return std::nullopt;
    }
  }

  // Whether an expression makes a string from strings (rather than reading one, or computing
  // a number: messages[loop.index0 + 1] is an index, not a name).
  bool stringy(std::uint32_t index, int budget = 32) const {
    if (budget <= 0 || !spend()) return false;
    const Node& n = node(index);
    switch (n.kind) {
      case NodeKind::String: return true;
      case NodeKind::Identifier: return constants_.contains(n.value);
      case NodeKind::Binary:
        if (n.value == "~") return true;
        if (n.value == "+") return stringy(kid(n, 0), budget - 1) || stringy(kid(n, 1), budget - 1);
        if (n.value == "%") return stringy(kid(n, 0), budget - 1);
        return false;
      case NodeKind::Filter:
        if (!string_building_filter(n.value) || n.kid_count == 0) return false;
        if (n.value == "join" && node(kid(n, 0)).kind == NodeKind::List) return true;
        return stringy(kid(n, 0), budget - 1) ||
               (n.value == "first" || n.value == "list" || n.value == "last"
                    ? node(kid(n, 0)).kind == NodeKind::Call ||
                          node(kid(n, 0)).kind == NodeKind::Dict ||
                          node(kid(n, 0)).kind == NodeKind::Filter
                    : false);
      case NodeKind::Subscript:
        return node(kid(n, 1)).kind == NodeKind::Slice && stringy(kid(n, 0), budget - 1);
      case NodeKind::Call: {
        const Node& callee = node(kid(n, 0));
        return callee.kind == NodeKind::Member &&
               (callee.value == "format" || callee.value == "join" || callee.value == "replace") &&
               stringy(kid(callee, 0), budget - 1);
      }
      default: return false;
    }
  }
  bool builds_string(std::uint32_t index) const {
    return node(index).kind != NodeKind::String && stringy(index);
  }

  // An attribute or item name: literal, or built.
  void check_name(std::string_view name, bool built, std::uint32_t position, std::uint64_t length,
                  std::string_view how) {
    if (built) {
      report(Code::TemplateBuiltAttributeName, position, length,
             "read attributes and items by literal names; a name built at render time hides "
             "what it reads from every scanner",
             "{} reads a name it builds from strings at render time{}", how,
             name.empty() ? std::string() : fmt::format(" ('{}')", escape(name, 60)));
    }
    if (starts_with(name, "_")) {
      report(Code::TemplatePrivateAttribute, position, length,
             "a chat template has no business with names starting with '_': they lead to "
             "Python internals (Jinja's sandbox refuses them); remove the access",
             "{} reads '{}', a name starting with '_'", how, escape(name, 60));
    }
    if (dangerous_name(name)) {
      report(Code::TemplateCodeExecution, position, length,
             "this is the path of published template exploits (CVE-2024-34359): do not load "
             "this file into a server that renders templates without a sandbox",
             "{} reaches '{}', a step towards Python's globals or the operating system", how,
             escape(name, 60));
    }
  }

  // Whether a range() bound is fixed by the messages: literals, lengths, loop counters.
  bool bounded(std::uint32_t index, int budget = 32) const {
    if (budget <= 0 || !spend()) return false;
    const Node& n = node(index);
    switch (n.kind) {
      case NodeKind::Number: {
        if (n.value.find_first_not_of("0123456789") != std::string_view::npos) return false;
        if (n.value.size() > 6) return false;
        return std::stoull(std::string(n.value)) <= kMaxLiteralRange;
      }
      case NodeKind::Filter: return n.value == "length" || n.value == "count";
      case NodeKind::Member:
        return n.value == "index" || n.value == "index0" || n.value == "length" ||
               n.value == "revindex" || n.value == "revindex0";
      case NodeKind::Identifier: return bounded_names_.contains(n.value);
      case NodeKind::Unary: return n.value == "-" && bounded(kid(n, 0), budget - 1);
      case NodeKind::Binary: {
        if (n.value == "+" || n.value == "-" || n.value == "//" || n.value == "/" ||
            n.value == "%") {
          return bounded(kid(n, 0), budget - 1) && bounded(kid(n, 1), budget - 1);
        }
        if (n.value == "*") {
          const Node& a = node(kid(n, 0));
          const Node& b = node(kid(n, 1));
          const auto small = [](const Node& x) {
            return x.kind == NodeKind::Number && x.value.size() <= 2;
          };
          return bounded(kid(n, 0), budget - 1) && bounded(kid(n, 1), budget - 1) &&
                 (small(a) || small(b));
        }
        return false;
      }
      case NodeKind::Call: {
        // min(...) is as bounded as its smallest bounded argument
        const Node& callee = node(kid(n, 0));
        if (callee.kind == NodeKind::Identifier && callee.value == "min") {
          for (std::uint32_t k = 1; k < n.kid_count; ++k) {
            if (bounded(kid(n, k), budget - 1)) return true;
          }
        }
        return false;
      }
      case NodeKind::Conditional:
        return bounded(kid(n, 0), budget - 1) &&
               (node(kid(n, 2)).kind == NodeKind::Empty || bounded(kid(n, 2), budget - 1));
      default: return false;
    }
  }

  // What an expression names, for every node at once (kids are made before their parents, so
  // one pass in index order sees each node's kids done): a name, attribute or literal item
  // `content` (a message's content), or one holding "message" or "conversation".
  static constexpr std::uint8_t kMentionsContent = 1;
  static constexpr std::uint8_t kMentionsMessages = 2;
  static std::uint8_t names_of(std::string_view name) {
    return static_cast<std::uint8_t>((content_name(name) ? kMentionsContent : 0) |
                                     (messages_name(name) ? kMentionsMessages : 0));
  }
  void compute_mentions() {
    mentions_.assign(program_.nodes.size(), 0);
    spend(program_.nodes.size() + program_.kids.size());
    for (std::uint32_t i = 0; i < program_.nodes.size(); ++i) {
      const Node& n = node(i);
      std::uint8_t bits = 0;
      if (n.kind == NodeKind::Identifier || n.kind == NodeKind::Member) bits = names_of(n.value);
      if (n.kind == NodeKind::Subscript && n.kid_count > 1 &&
          node(kid(n, 1)).kind == NodeKind::String) {
        bits |= names_of(node(kid(n, 1)).value);
      }
      for (std::uint32_t k = 0; k < n.kid_count; ++k) {
        if (kid(n, k) < i) bits |= mentions_[kid(n, k)];
      }
      mentions_[i] = bits;
    }
  }
  // Whether an expression reads a message's content, or the messages.
  [[nodiscard]] bool mentions_content(std::uint32_t index) const {
    return (mentions_[index] & kMentionsContent) != 0;
  }
  [[nodiscard]] bool mentions_messages(std::uint32_t index) const {
    return (mentions_[index] & kMentionsMessages) != 0;
  }
  static bool content_name(std::string_view name) { return name == "content"; }
  static bool messages_name(std::string_view name) {
    return name.find("message") != std::string_view::npos ||
           name.find("conversation") != std::string_view::npos;
  }

  // A test comparing a message's content with a literal: the literal's node, or nothing.
  std::optional<std::uint32_t> content_comparison(std::uint32_t index, int budget = 64) const {
    if (budget <= 0 || !spend()) return std::nullopt;
    const Node& n = node(index);
    if (n.kind == NodeKind::Binary &&
        (n.value == "in" || n.value == "not in" || n.value == "==" || n.value == "!=")) {
      const std::uint32_t a = kid(n, 0);
      const std::uint32_t b = kid(n, 1);
      if (node(a).kind == NodeKind::String && mentions_content(b)) return a;
      if (node(b).kind == NodeKind::String && mentions_content(a)) return b;
    }
    if (n.kind == NodeKind::Call && n.kid_count >= 2) {
      const Node& callee = node(kid(n, 0));
      if (callee.kind == NodeKind::Member &&
          (callee.value == "startswith" || callee.value == "endswith" || callee.value == "find" ||
           callee.value == "count" || callee.value == "__contains__") &&
          mentions_content(kid(callee, 0)) && node(kid(n, 1)).kind == NodeKind::String) {
        return kid(n, 1);
      }
    }
    for (std::uint32_t k = 0; k < n.kid_count; ++k) {
      if (auto found = content_comparison(kid(n, k), budget - 1)) return found;
    }
    return std::nullopt;
  }

  // The words of prose a block emits: its texts and printed literals, and those of the blocks
  // and ifs in it (not of loops, macros or other statements). Computed for every node at once,
  // kids before parents, the first time a check asks: each text is read once however deep the
  // ifs that contain it.
  std::size_t emitted_prose(std::uint32_t block) {
    if (prose_.empty()) {
      prose_.assign(program_.nodes.size(), 0);
      spend(program_.nodes.size() + program_.kids.size());
      for (std::uint32_t i = 0; i < program_.nodes.size(); ++i) {
        const Node& n = node(i);
        if (n.kind == NodeKind::Text) {
          spend_bytes(n.value.size());
          prose_[i] = prose_words(n.value);
        } else if (n.kind == NodeKind::Output && n.kid_count > 0 &&
                   node(kid(n, 0)).kind == NodeKind::String) {
          spend_bytes(node(kid(n, 0)).value.size());
          prose_[i] = prose_words(node(kid(n, 0)).value);
        } else if (n.kind == NodeKind::Block || n.kind == NodeKind::If) {
          for (std::uint32_t k = 0; k < n.kid_count; ++k) {
            if (kid(n, k) < i) prose_[i] += prose_[kid(n, k)];
          }
        }
      }
    }
    return prose_[block];
  }

  // ------------------------------------------------------------ where a name comes from ---
  // Jinja2 reads x[name] as the item, and where there is none as the attribute of that name, so a
  // variable index is an attribute lookup whenever it can hold a string such as '__class__'. What
  // decides is where the index's value may come from (docs/chat-templates.md, "Names from
  // variables"): the template's own text (its literals, text, macro output, keyword names),
  // Jinja's globals and the file's token strings are the sources a payload can use; the request's
  // data (messages, tools) is not the file's, and numbers carry no name. Each node gets a level:
  //   kClean    nothing of the template's text reaches it (data, numbers, booleans);
  //   kLiteral  at most harmless literals reach it, unchanged (a variable set to 'content', an
  //             item of a list of such literals, a loop over one);
  //   kBuilt    a literal that is not harmless, or any string made from the template's text by an
  //             operation (~, +, %, format, replace, join, slicing, a method, a macro's output,
  //             ...), Jinja's globals or the file's tokens may reach it.
  // An index at kBuilt is GGUF9003. The levels are a reachability over one graph of the template
  // (its nodes, plus one vertex per variable name, per attribute name set with `ns.x = ...` and
  // per macro's output): values flow from operands to results, from a binding's value to its name
  // (set, block set, for targets, tuple unpacking, macro parameters and their defaults, with,
  // list.append and other mutations) and from a name to its reads, through edges that pass a
  // value on unchanged or transform it. Two breadth-first searches, so linear in the nodes.
  static constexpr std::uint8_t kClean = 0;
  static constexpr std::uint8_t kLiteral = 1;
  static constexpr std::uint8_t kBuilt = 2;

  // A literal that reads nothing private as a name, a format field or a piece of a split: no '_'
  // that starts it or follows anything but a letter or digit (no '__', no '._x', no '{0._x}'),
  // and no name on the way to Python's internals.
  static bool harmless_literal(std::string_view s) {
    if (dangerous_name(s)) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '_') continue;
      if (i == 0) return false;
      const auto before = static_cast<unsigned char>(s[i - 1]);
      if (!std::isalnum(before) && before < 0x80) return false;
    }
    return true;
  }
  // Names whose value is a Python object of Jinja's (or a server's) rather than data: printed or
  // sliced, they give strings the template did not write ('_' from `lipsum|string`).
  static bool global_object(std::string_view name) {
    return gadget_name(name) || name == "raise_exception" || name == "strftime_now" ||
           name == "caller" || name == "varargs" || name == "kwargs";
  }
  // Strings a server fills in from the file itself: its special tokens.
  static bool file_token(std::string_view name) {
    return name == "bos_token" || name == "eos_token" || name == "unk_token" ||
           name == "pad_token" || name == "sep_token" || name == "cls_token" ||
           name == "mask_token";
  }

  // Which expressions are numbers (a literal, a loop counter, a length, arithmetic on them), for
  // every node at once, kids before parents: `+` and `%` on one are arithmetic, not strings.
  std::vector<bool> numbers() const {
    std::vector<bool> number(program_.nodes.size(), false);
    for (std::uint32_t i = 0; i < program_.nodes.size(); ++i) {
      const Node& n = node(i);
      const auto kid_number = [&](std::uint32_t k) {
        return k < n.kid_count && kid(n, k) < i && number[kid(n, k)];
      };
      switch (n.kind) {
        case NodeKind::Number: number[i] = true; break;
        case NodeKind::Unary: number[i] = n.value != "not" && kid_number(0); break;
        case NodeKind::Member:
          number[i] = n.kid_count > 0 && node(kid(n, 0)).kind == NodeKind::Identifier &&
                      node(kid(n, 0)).value == "loop" &&
                      (n.value == "index" || n.value == "index0" || n.value == "revindex" ||
                       n.value == "revindex0" || n.value == "length" || n.value == "depth" ||
                       n.value == "depth0");
          break;
        case NodeKind::Filter:
          number[i] = n.value == "length" || n.value == "count" || n.value == "int" ||
                      n.value == "float" || n.value == "round" || n.value == "abs" ||
                      n.value == "wordcount";
          break;
        case NodeKind::Binary:
          number[i] = (n.value == "-" || n.value == "*" || n.value == "/" || n.value == "//" ||
                       n.value == "**" || n.value == "+" || n.value == "%") &&
                      kid_number(0) && kid_number(1);
          break;
        default: break;
      }
    }
    return number;
  }

  class FlowGraph {
   public:
    explicit FlowGraph(std::uint32_t nodes) : vertices_(nodes), source_(nodes, kClean) {}
    std::uint32_t vertex(std::unordered_map<std::string_view, std::uint32_t>& names,
                         std::string_view name) {
      const auto [it, inserted] = names.emplace(name, vertices_);
      if (inserted) {
        ++vertices_;
        source_.push_back(kClean);
      }
      return it->second;
    }
    void edge(std::uint32_t from, std::uint32_t to, bool transform) {
      edges_.push_back({from, to, transform});
    }
    void source(std::uint32_t v, std::uint8_t at) { source_[v] = std::max(source_[v], at); }
    [[nodiscard]] std::size_t edges() const { return edges_.size(); }

    // The level of every vertex: kBuilt where a kBuilt source reaches, or a kLiteral source
    // reaches through a transforming edge; kLiteral where only kLiteral sources reach, unchanged.
    std::vector<std::uint8_t> levels() const {
      std::vector<std::uint32_t> first(vertices_ + 1, 0);
      for (const Edge& e : edges_) ++first[e.from + 1];
      for (std::uint32_t v = 0; v < vertices_; ++v) first[v + 1] += first[v];
      std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
      std::vector<std::uint32_t> order(edges_.size());
      for (std::uint32_t e = 0; e < edges_.size(); ++e) order[fill[edges_[e].from]++] = e;
      std::vector<std::uint8_t> reached(vertices_, kClean);
      std::vector<std::uint32_t> queue;
      // Unchanged literals: through the edges that pass a value on.
      for (std::uint32_t v = 0; v < vertices_; ++v) {
        if (source_[v] == kLiteral) {
          reached[v] = kLiteral;
          queue.push_back(v);
        }
      }
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::uint32_t v = queue[q];
        for (std::uint32_t k = first[v]; k < first[v + 1]; ++k) {
          const Edge& e = edges_[order[k]];
          if (!e.transform && reached[e.to] == kClean) {
            reached[e.to] = kLiteral;
            queue.push_back(e.to);
          }
        }
      }
      // Built strings: from their sources and from literals through a transforming edge.
      std::vector<std::uint32_t> built;
      for (std::uint32_t v = 0; v < vertices_; ++v) {
        if (source_[v] == kBuilt) built.push_back(v);
      }
      for (const Edge& e : edges_) {
        if (e.transform && reached[e.from] == kLiteral) built.push_back(e.to);
      }
      for (const std::uint32_t v : built) reached[v] = kBuilt;
      for (std::size_t q = 0; q < built.size(); ++q) {
        const std::uint32_t v = built[q];
        for (std::uint32_t k = first[v]; k < first[v + 1]; ++k) {
          const Edge& e = edges_[order[k]];
          if (reached[e.to] != kBuilt) {
            reached[e.to] = kBuilt;
            built.push_back(e.to);
          }
        }
      }
      return reached;
    }

   private:
    struct Edge {
      std::uint32_t from;
      std::uint32_t to;
      bool transform;
    };
    std::uint32_t vertices_;
    std::vector<std::uint8_t> source_;
    std::vector<Edge> edges_;
  };

  void compute_levels() {
    const auto count = static_cast<std::uint32_t>(program_.nodes.size());
    FlowGraph graph(count);
    std::unordered_map<std::string_view, std::uint32_t> names;
    std::unordered_map<std::string_view, std::uint32_t> attributes;
    std::unordered_map<std::string_view, std::uint32_t> outputs;
    std::unordered_map<std::string_view, std::vector<std::string_view>> parameters;
    const auto name = [&](std::string_view n) { return graph.vertex(names, n); };
    constexpr bool kPass = false;
    constexpr bool kTransform = true;
    // One unit per node and kid (the passes that build the graph), one per edge (the searches).
    spend(program_.nodes.size() + program_.kids.size());
    const std::vector<bool> number = numbers();
    for (const Node& n : program_.nodes) {
      if (n.kind != NodeKind::Macro || n.kid_count == 0) continue;
      auto& list = parameters[n.value];
      const Node& params = node(kid(n, 0));
      for (std::uint32_t k = 0; k < params.kid_count && list.size() < 64; ++k) {
        const Node& p = node(kid(params, k));
        if (p.kind == NodeKind::Identifier || p.kind == NodeKind::Keyword) list.push_back(p.value);
      }
    }
    // A macro handed around as a value ({% set f = get %}{{ f(x, '__class__') }}) is called by
    // another name: then the arguments of every call of an unknown function may be any macro's.
    std::vector<bool> callee(count, false);
    for (const Node& n : program_.nodes) {
      if (n.kind == NodeKind::Call && n.kid_count > 0) callee[kid(n, 0)] = true;
    }
    bool macro_as_value = false;
    for (std::uint32_t i = 0; i < count && !macro_as_value; ++i) {
      macro_as_value =
          node(i).kind == NodeKind::Identifier && !callee[i] && parameters.contains(node(i).value);
    }
    const std::uint32_t any_parameter =
        graph.vertex(names, std::string_view("\0any parameter", 14));
    // The arguments of caller(...), which go to the parameters of a {% call(params) %} block.
    const std::uint32_t caller_arguments =
        graph.vertex(names, std::string_view("\0caller arguments", 17));
    if (macro_as_value) {
      for (const auto& [macro_name, list] : parameters) {
        for (const std::string_view p : list) graph.edge(any_parameter, name(p), kPass);
        graph.edge(any_parameter, name("varargs"), kPass);
        graph.edge(any_parameter, name("kwargs"), kPass);
      }
    }
    // Where a value assigned to a target goes: a name, an attribute set on a namespace, or each
    // part of a tuple (its parts are names or attributes: one level).
    const auto bind = [&](std::uint32_t target, std::uint32_t value, bool transform) {
      const auto one = [&](const Node& part) {
        if (part.kind == NodeKind::Identifier) {
          graph.edge(value, name(part.value), transform);
        } else if (part.kind == NodeKind::Member) {
          graph.edge(value, graph.vertex(attributes, part.value), transform);
        } else if (part.kind == NodeKind::Filter && part.kid_count > 0 &&
                   node(kid(part, 0)).kind == NodeKind::Identifier) {
          graph.edge(value, name(node(kid(part, 0)).value), kTransform);  // {% set x | f %}
        }
      };
      const Node& whole = node(target);
      if (whole.kind == NodeKind::List) {
        for (std::uint32_t k = 0; k < whole.kid_count; ++k) one(node(kid(whole, k)));
      } else {
        one(whole);
      }
    };
    for (std::uint32_t i = 0; i < count; ++i) {
      const Node& n = node(i);
      const auto kids_to_self = [&](std::uint32_t from, bool transform) {
        for (std::uint32_t k = from; k < n.kid_count; ++k) graph.edge(kid(n, k), i, transform);
      };
      switch (n.kind) {
        case NodeKind::Identifier:
          graph.edge(name(n.value), i, kPass);
          if (global_object(n.value) || file_token(n.value)) graph.source(i, kBuilt);
          break;
        case NodeKind::String:
          graph.source(i, harmless_literal(n.value) ? kLiteral : kBuilt);
          break;
        case NodeKind::Text: {
          const std::size_t first = n.value.find_first_not_of(" \t\r\n");
          if (first == std::string_view::npos) break;
          const std::size_t last = n.value.find_last_not_of(" \t\r\n");
          graph.source(
              i, harmless_literal(n.value.substr(first, last - first + 1)) ? kLiteral : kBuilt);
          break;
        }
        case NodeKind::Keyword:
          kids_to_self(0, kPass);
          // dict(__class__=1)|list|first: a keyword's name becomes a string
          if (!n.value.empty() && !harmless_literal(n.value)) graph.source(i, kBuilt);
          break;
        case NodeKind::Member:
          kids_to_self(0, kPass);
          graph.edge(graph.vertex(attributes, n.value), i, kPass);
          break;
        case NodeKind::Subscript:
          if (n.kid_count >= 2) {
            const Node& index = node(kid(n, 1));
            graph.edge(kid(n, 0), i, index.kind == NodeKind::Slice ? kTransform : kPass);
            // ns['x'] reads what {% set ns.x = ... %} wrote
            if (index.kind == NodeKind::String) {
              graph.edge(graph.vertex(attributes, index.value), i, kPass);
            }
          }
          break;
        case NodeKind::Call:
          call_flow(graph, i, n, parameters, outputs, names, attributes,
                    macro_as_value ? any_parameter : i, caller_arguments);
          break;
        case NodeKind::Filter:
          filter_flow(graph, i, n);
          // ns|attr('x') reads what {% set ns.x = ... %} wrote
          if (n.value == "attr" && n.kid_count >= 2 && node(kid(n, 1)).kind == NodeKind::String) {
            graph.edge(graph.vertex(attributes, node(kid(n, 1)).value), i, kPass);
          }
          break;
        case NodeKind::Binary:
          if (n.kid_count < 2) break;
          // a + [b] joins lists, whose items pass on unchanged
          if (n.value == "and" || n.value == "or" || n.value == "*" ||
              (n.value == "+" && (node(kid(n, 0)).kind == NodeKind::List ||
                                  node(kid(n, 1)).kind == NodeKind::List))) {
            kids_to_self(0, kPass);
          } else if (n.value == "~" || ((n.value == "+" || n.value == "%") && !number[kid(n, 0)] &&
                                        !number[kid(n, 1)])) {
            kids_to_self(0, kTransform);
          }
          break;
        case NodeKind::Conditional:
          if (n.kid_count >= 3) {
            graph.edge(kid(n, 0), i, kPass);
            graph.edge(kid(n, 2), i, kPass);
          }
          break;
        case NodeKind::List:
        case NodeKind::Dict:
        case NodeKind::Spread:
        case NodeKind::Output:
        case NodeKind::Block: kids_to_self(0, kPass); break;
        case NodeKind::If:
        case NodeKind::For:
          if (n.kind == NodeKind::For && n.kid_count >= 2) bind(kid(n, 0), kid(n, 1), kPass);
          kids_to_self(n.kind == NodeKind::If ? 1 : 2, kPass);
          break;
        case NodeKind::Set:
          if (n.kid_count >= 2) {
            bind(kid(n, 0), kid(n, 1), node(kid(n, 1)).kind == NodeKind::Block);
          }
          break;
        case NodeKind::Macro:
          if (n.kid_count >= 2) {
            const Node& params = node(kid(n, 0));
            for (std::uint32_t k = 0; k < params.kid_count; ++k) {
              const Node& p = node(kid(params, k));
              if (p.kind == NodeKind::Keyword && p.kid_count > 0) {
                graph.edge(kid(p, 0), name(p.value), kPass);
              }
            }
            graph.edge(kid(n, 1), graph.vertex(outputs, n.value), kTransform);
          }
          break;
        case NodeKind::CallBlock:
          if (n.kid_count >= 2) graph.edge(kid(n, 1), name("caller"), kTransform);
          if (n.kid_count >= 3) {  // {% call(a, b='x') m() %}: what caller(...) passes
            const Node& params = node(kid(n, 2));
            for (std::uint32_t k = 0; k < params.kid_count; ++k) {
              const Node& p = node(kid(params, k));
              if (p.kind != NodeKind::Identifier && p.kind != NodeKind::Keyword) continue;
              graph.edge(caller_arguments, name(p.value), kPass);
              if (p.kind == NodeKind::Keyword && p.kid_count > 0) {
                graph.edge(kid(p, 0), name(p.value), kPass);
              }
            }
          }
          break;
        case NodeKind::Other:
          // {% with a = x, b = y %}: the names, then the values, then the body
          if (n.value == "with") {
            for (std::uint32_t k = 0; k + 2 < n.kid_count; k += 2) {
              bind(kid(n, k), kid(n, k + 1), kPass);
            }
          }
          break;
        default: break;
      }
    }
    spend(graph.edges());
    levels_ = graph.levels();
    levels_.resize(count);
  }

  void call_flow(FlowGraph& graph, std::uint32_t i, const Node& n,
                 const std::unordered_map<std::string_view, std::vector<std::string_view>>& params,
                 std::unordered_map<std::string_view, std::uint32_t>& outputs,
                 std::unordered_map<std::string_view, std::uint32_t>& names,
                 std::unordered_map<std::string_view, std::uint32_t>& attributes,
                 std::uint32_t any_parameter, std::uint32_t caller_arguments) {
    if (n.kid_count == 0) return;
    const auto args_to = [&](std::uint32_t to, bool transform) {
      for (std::uint32_t k = 1; k < n.kid_count; ++k) graph.edge(kid(n, k), to, transform);
    };
    const std::uint32_t callee_index = kid(n, 0);
    const Node& callee = node(callee_index);
    if (callee.kind == NodeKind::Identifier) {
      const std::string_view f = callee.value;
      if (const auto macro = params.find(f); macro != params.end()) {
        // A macro: what it prints is its value; each argument goes to its parameter.
        graph.edge(graph.vertex(outputs, f), i, true);
        const std::vector<std::string_view>& list = macro->second;
        std::uint32_t position = 0;
        for (std::uint32_t k = 1; k < n.kid_count; ++k) {
          const std::uint32_t arg = kid(n, k);
          const Node& a = node(arg);
          if (a.kind == NodeKind::Keyword) {
            const bool known = std::find(list.begin(), list.end(), a.value) != list.end();
            graph.edge(arg, graph.vertex(names, known ? a.value : "kwargs"), false);
          } else if (a.kind == NodeKind::Spread) {
            for (const std::string_view p : list) graph.edge(arg, graph.vertex(names, p), false);
            graph.edge(arg, graph.vertex(names, "varargs"), false);
          } else {
            graph.edge(arg,
                       graph.vertex(names, position < list.size() ? list[position] : "varargs"),
                       false);
            ++position;
          }
        }
        return;
      }
      if (f == "caller") {
        graph.edge(callee_index, i, true);
        args_to(caller_arguments, false);
      } else if (f == "namespace" || f == "dict" || f == "cycler" || f == "joiner") {
        args_to(i, false);
      } else if (f != "range" && f != "lipsum" && f != "raise_exception") {
        args_to(i, true);  // another function: its result may be made of its arguments
        if (any_parameter != i) args_to(any_parameter, false);  // or a macro under another name
      }
      return;
    }
    if (callee.kind == NodeKind::Member && callee.kid_count > 0) {
      const std::string_view m = callee.value;
      if (m == "get" || m == "items" || m == "keys" || m == "values" || m == "copy" || m == "pop" ||
          m == "popitem" || m == "setdefault") {
        graph.edge(callee_index, i, false);
        if (m == "get" || m == "pop" || m == "setdefault") {
          for (std::uint32_t k = 2; k < n.kid_count; ++k) graph.edge(kid(n, k), i, false);
        }
        return;
      }
      if (m == "startswith" || m == "endswith" || m == "find" || m == "rfind" || m == "index" ||
          m == "rindex" || m == "count" || m == "isdigit" || m == "isalpha" || m == "isalnum" ||
          m == "isspace" || m == "islower" || m == "isupper" || m == "isnumeric") {
        return;  // a number or a boolean
      }
      if (m == "split" || m == "rsplit" || m == "strip" || m == "lstrip" || m == "rstrip" ||
          m == "splitlines" || m == "lower" || m == "upper" || m == "title" || m == "capitalize" ||
          m == "swapcase" || m == "casefold") {
        // Parts of the string or its letters recased: the arguments are separators or
        // characters taken away, never in the result.
        graph.edge(callee_index, i, true);
        return;
      }
      if (m == "append" || m == "extend" || m == "insert" || m == "add" || m == "update") {
        // list.append(x): the list now holds x
        const Node& receiver = node(kid(callee, 0));
        const std::uint32_t to = receiver.kind == NodeKind::Member
                                     ? graph.vertex(attributes, receiver.value)
                                     : graph.vertex(names, root_name(kid(callee, 0)));
        args_to(to, false);
        return;
      }
    }
    // format, format_map, replace, join and any other method or computed callee: the result is
    // made of the callee's object and the arguments.
    graph.edge(callee_index, i, true);
    args_to(i, true);
  }

  // The name at the root of an access chain (ns in ns.a.b[0]), or "" when it is no name.
  std::string_view root_name(std::uint32_t index) const {
    for (int steps = 0; steps < 4096 && spend(); ++steps) {
      const Node& n = node(index);
      if (n.kind == NodeKind::Identifier) return n.value;
      if ((n.kind != NodeKind::Member && n.kind != NodeKind::Subscript &&
           n.kind != NodeKind::Call) ||
          n.kid_count == 0) {
        break;
      }
      index = kid(n, 0);
    }
    return {};
  }

  void filter_flow(FlowGraph& graph, std::uint32_t i, const Node& n) {
    if (n.kid_count == 0) return;
    const std::string_view f = n.value;
    if (f == "length" || f == "count" || f == "int" || f == "float" || f == "abs" || f == "round" ||
        f == "wordcount" || f == "filesizeformat") {
      return;  // a number
    }
    bool by_attribute = false;
    for (std::uint32_t k = 1; k < n.kid_count; ++k) {
      const Node& a = node(kid(n, k));
      by_attribute = by_attribute || (a.kind == NodeKind::Keyword && a.value == "attribute");
    }
    // Filters that select or reorder items pass them on unchanged; the others make new values.
    const bool pass = f == "first" || f == "last" || f == "list" || f == "default" || f == "d" ||
                      f == "unique" || f == "sort" || f == "selectattr" || f == "rejectattr" ||
                      f == "select" || f == "reject" || f == "dictsort" || f == "items" ||
                      f == "batch" || f == "slice" || f == "groupby" || f == "min" || f == "max" ||
                      f == "random" || f == "sum" || f == "attr" || (f == "map" && by_attribute);
    graph.edge(kid(n, 0), i, !pass);
    if (f == "default" || f == "d") {
      for (std::uint32_t k = 1; k < n.kid_count; ++k) graph.edge(kid(n, k), i, false);
    } else if (f == "join" || f == "replace" || f == "format" || f == "center" || f == "indent" ||
               f == "wordwrap" || f == "truncate" || f == "map" || f == "xmlattr" ||
               f == "urlize") {
      for (std::uint32_t k = 1; k < n.kid_count; ++k) graph.edge(kid(n, k), i, true);
    }
  }

  [[nodiscard]] std::uint8_t level(std::uint32_t index) const {
    return index < levels_.size() ? levels_[index] : kBuilt;
  }

  // ----------------------------------------------------------------------- the walk ---
  struct Frame {
    std::uint32_t node;
    bool in_message_loop;
    bool conditional;
    std::int32_t macro;  // index into macros_, or -1
  };

  void walk() {
    in_chain_.assign(program_.nodes.size(), false);
    compute_mentions();
    compute_levels();
    std::vector<Frame> stack{{program_.root, false, false, -1}};
    while (!stack.empty()) {
      if (!spend()) return;  // the budget is spent: no conclusion about the whole template
      const Frame f = stack.back();
      stack.pop_back();
      const Node& n = node(f.node);
      visit(f, n);
      const bool message_loop =
          n.kind == NodeKind::For && n.kid_count > 1 && mentions_messages(kid(n, 1));
      // Children, with the context they are in.
      for (std::uint32_t k = n.kid_count; k-- > 0;) {
        Frame child{kid(n, k), f.in_message_loop, f.conditional, f.macro};
        if (n.kind == NodeKind::For && k >= 2) {
          child.in_message_loop = f.in_message_loop || message_loop;
          child.conditional = true;  // an empty iterable emits nothing
        }
        // add_generation_prompt is true on every request that asks for a reply: what it adds
        // is as unconditional as the text outside any branch.
        if (n.kind == NodeKind::If && k >= 1 &&
            !(k == 1 && node(kid(n, 0)).kind == NodeKind::Identifier &&
              node(kid(n, 0)).value == "add_generation_prompt")) {
          child.conditional = true;
        }
        if (n.kind == NodeKind::Conditional && k != 1) child.conditional = true;
        if (n.kind == NodeKind::Macro) {
          child.macro = static_cast<std::int32_t>(macro_index(n.value));
          child.conditional = true;
        }
        stack.push_back(child);
      }
    }
    recursive_macros();
    // Prose the known template it matches has is its vendor's; only more than that counts.
    if (hidden_prose_words_ >= reference_prose_words_ + kProseWords && !identical_) {
      report(Code::TemplateHiddenText, hidden_prose_at_, 1,
             "every conversation gets this text: read it; a template needs role markers, "
             "not instructions of its own",
             "the template emits {} words of prose outside the message loop whatever the "
             "messages{} (first: \"{}\")",
             hidden_prose_words_,
             reference_prose_words_ > 0 ? fmt::format(", {} more than the known template it edits",
                                                      hidden_prose_words_ - reference_prose_words_)
                                        : std::string(),
             escape(hidden_prose_sample_, 60));
    }
  }

  std::size_t macro_index(std::string_view name) {
    const auto [it, inserted] = macro_ids_.emplace(name, macros_.size());
    if (inserted) macros_.push_back({name, 0, {}, {}});
    return it->second;
  }

  void visit(const Frame& f, const Node& n) {
    switch (n.kind) {
      case NodeKind::Member:
      case NodeKind::Subscript:
        if (!in_chain_[f.node]) access_chain(f.node);
        break;
      case NodeKind::Filter:
        if (n.value == "attr" && !in_chain_[f.node]) access_chain(f.node);
        filter(n);
        break;
      case NodeKind::Keyword:
        // dict(__class__=1)|list|first builds the name '__class__' from a keyword
        if (starts_with(n.value, "__")) {
          check_name(n.value, true, n.position, n.value.size(), "a keyword argument");
        }
        break;
      case NodeKind::Call:
        if (!in_chain_[f.node]) access_chain(f.node);
        call(f, n);
        break;
      case NodeKind::Set: set(n); break;
      case NodeKind::Include:
        report(Code::TemplateInclude, n.position, 2,
               "a chat template must stand alone: inline what it includes (llama.cpp's engine "
               "has no include, import or extends, and a server that has one reads files with it)",
               "the template uses '{}', which reads another template", n.value);
        break;
      case NodeKind::Macro: {
        Macro& m = macros_[macro_index(n.value)];
        m.position = n.position;
        if (n.kid_count > 0) {
          const Node& params = node(kid(n, 0));
          for (std::uint32_t k = 0; k < params.kid_count && m.params.size() < 64; ++k) {
            const Node& p = node(kid(params, k));
            if (p.kind == NodeKind::Identifier || p.kind == NodeKind::Keyword) {
              m.params.push_back(p.value);
            }
          }
        }
        break;
      }
      case NodeKind::CallBlock:
        if (n.kid_count > 0) note_macro_call(f, kid(n, 0));
        break;
      case NodeKind::Text:
        if (!f.in_message_loop && !f.conditional && f.macro < 0) hidden_prose(n.position, n.value);
        break;
      case NodeKind::Output:
        if (!f.in_message_loop && !f.conditional && f.macro < 0 && n.kid_count > 0 &&
            node(kid(n, 0)).kind == NodeKind::String) {
          hidden_prose(node(kid(n, 0)).position, node(kid(n, 0)).value);
        }
        break;
      case NodeKind::If: content_branch(n); break;
      case NodeKind::String: literal_text(n.position, n.value, /*literal=*/true); break;
      default: break;
    }
  }

  // One chain of accesses (x.a['b']|attr('c')(...).d), read once from its outermost node: each
  // code at most once for it, at the access that shows it (a chain that reaches Python's
  // globals shows it in several steps, and one finding says so).
  void access_chain(std::uint32_t outermost) {
    struct Access {
      std::string name;  // the name read ("" when built and not foldable)
      std::uint32_t position;
      std::uint64_t length;
      bool built;
      std::string_view variable;  // a name read through a variable: the variable
    };
    std::vector<Access> accesses;
    std::uint32_t current = outermost;
    for (std::size_t steps = 0; steps < 4096 && spend(); ++steps) {
      in_chain_[current] = true;
      const Node& n = node(current);
      if (n.kind == NodeKind::Member) {
        accesses.push_back({std::string(n.value), n.position, n.value.size(), false, {}});
      } else if (n.kind == NodeKind::Subscript) {
        const std::uint32_t index = kid(n, 1);
        const Node& i = node(index);
        if (i.kind == NodeKind::String) {
          accesses.push_back({std::string(i.value.substr(0, kMaxFolded)),
                              i.position,
                              i.value.size() + 2,
                              false,
                              {}});
        } else if (i.kind != NodeKind::Slice && builds_string(index)) {
          accesses.push_back({fold(index).value_or(""), n.position, 1, true, {}});
        } else if (i.kind != NodeKind::Slice && level(index) == kBuilt) {
          // x[name]: an item, or where there is none the attribute `name`
          accesses.push_back({fold(index).value_or(""), n.position, 1, true,
                              i.kind == NodeKind::Identifier ? i.value : std::string_view("?")});
        }
      } else if (n.kind == NodeKind::Filter && n.value == "attr") {
        if (n.kid_count >= 2) {
          const Node& a = node(kid(n, 1));
          if (a.kind == NodeKind::String) {
            accesses.push_back({std::string(a.value.substr(0, kMaxFolded)),
                                a.position,
                                a.value.size() + 2,
                                false,
                                {}});
          } else {
            accesses.push_back({fold(kid(n, 1)).value_or(""), n.position, 4, true, {}});
          }
        }
      } else if (n.kind != NodeKind::Call) {
        break;  // the chain's root
      }
      if (n.kid_count == 0) break;
      current = kid(n, 0);
    }
    const Node& root = node(current);
    std::reverse(accesses.begin(), accesses.end());  // from the root outwards
    if (accesses.empty()) return;

    for (const Access& a : accesses) {
      if (!a.built) continue;
      if (!a.variable.empty()) {
        report(Code::TemplateBuiltAttributeName, a.position, a.length,
               "index with numbers or data; Jinja2 reads x[name] as the attribute `name` where "
               "x has no such item, so a name from the template's own text is an attribute "
               "lookup no scanner can read",
               "the template reads an item by a name that comes from its own text through '{}' "
               "(an attribute lookup where there is no such item){}",
               escape(a.variable, 40),
               a.name.empty() ? std::string() : fmt::format(": '{}'", escape(a.name, 60)));
      } else {
        report(Code::TemplateBuiltAttributeName, a.position, a.length,
               "read attributes and items by literal names; a name built at render time hides "
               "what it reads from every scanner",
               "the template reads a name it builds from strings at render time{}",
               a.name.empty() ? std::string() : fmt::format(" ('{}')", escape(a.name, 60)));
      }
      break;
    }
    std::string path = root.kind == NodeKind::Identifier ? std::string(root.value) : "(...)";
    std::string private_names;
    const Access* first_private = nullptr;
    bool dangerous = false;
    for (const Access& a : accesses) {
      path += a.name.empty() ? ".?" : "." + a.name;
      dangerous = dangerous || dangerous_name(a.name);
      if (starts_with(a.name, "_")) {
        if (first_private == nullptr) first_private = &a;
        if (!private_names.empty()) private_names += ", ";
        private_names += a.name;
      }
    }
    if (first_private != nullptr) {
      report(Code::TemplatePrivateAttribute, first_private->position, first_private->length,
             "a chat template has no business with names starting with '_': they lead to "
             "Python internals (Jinja's sandbox refuses them); remove the access",
             "the template reads {}, name{} starting with '_'", escape(private_names, 80),
             private_names.find(',') == std::string::npos ? " a" : "s");
    }
    const bool gadget = root.kind == NodeKind::Identifier && gadget_name(root.value) &&
                        root.value != "range" && root.value != "dict";
    if (dangerous || gadget) {
      const std::uint32_t at =
          root.kind == NodeKind::Identifier ? root.position : accesses.front().position;
      report(Code::TemplateCodeExecution, at,
             root.kind == NodeKind::Identifier ? root.value.size() : 1,
             gadget ? "Jinja's own globals are the published way out of a template "
                      "(CVE-2026-5760): a chat template never needs their attributes"
                    : "this is the path of published template exploits (CVE-2024-34359): do "
                      "not load this file into a server that renders templates without a "
                      "sandbox",
             "the template reaches for {}: '{}'",
             gadget ? fmt::format("Python's globals through Jinja's global '{}'", root.value)
                    : std::string("Python's internals or the operating system"),
             escape(path, 100));
    }
  }

  // The filters that read an attribute by a name given as an argument (Jinja2's
  // make_attrgetter: a dotted path, each part an item or else an attribute; sort and unique also
  // take several, comma-separated): which positional argument names it, besides attribute=.
  static std::optional<std::uint32_t> attribute_position(std::string_view filter) {
    if (filter == "selectattr" || filter == "rejectattr" || filter == "groupby" ||
        filter == "sum") {
      return 0;
    }
    if (filter == "min" || filter == "max" || filter == "unique" || filter == "join") return 1;
    if (filter == "sort") return 2;
    if (filter == "map") return std::nullopt;  // map(attribute=...); map('attr', name) below
    return std::nullopt;
  }
  static bool reads_attributes(std::string_view filter) {
    return filter == "map" || attribute_position(filter).has_value();
  }

  void filter(const Node& n) {
    if (!reads_attributes(n.value)) return;
    std::uint32_t positional = 0;
    const auto position = attribute_position(n.value);
    std::optional<std::uint32_t> filter_name;  // map's first positional argument
    for (std::uint32_t k = 1; k < n.kid_count; ++k) {
      const std::uint32_t arg = kid(n, k);
      const Node& a = node(arg);
      if (a.kind == NodeKind::Spread) {
        // *args or **kwargs: the attribute may be in it
        if (a.kid_count > 0) check_attribute_argument(kid(a, 0), n.value);
        continue;
      }
      if (a.kind == NodeKind::Keyword) {
        if (a.value == "attribute" && a.kid_count > 0) check_attribute_argument(kid(a, 0), n.value);
        continue;
      }
      const std::uint32_t index = positional++;
      if (n.value == "map") {
        if (index == 0) {
          filter_name = arg;
          // map(name_of_a_filter): a filter name built at render time could be 'attr'
          if (a.kind != NodeKind::String) check_attribute_argument(arg, "map");
        } else if (filter_name && node(*filter_name).kind == NodeKind::String &&
                   node(*filter_name).value == "attr" && index == 1) {
          check_attribute_argument(arg, "map('attr')");  // map('attr', name)
        }
      } else if (position && index == *position) {
        check_attribute_argument(arg, n.value);
      }
    }
  }

  // An attribute path given to a filter: a literal is checked part by part like a literal
  // attribute; a number is an index; anything else is a name GGUF9003 reports.
  void check_attribute_argument(std::uint32_t index, std::string_view filter_name) {
    const Node& value = node(index);
    const std::string how = fmt::format("|{}", filter_name);
    if (value.kind == NodeKind::Number) return;
    if (value.kind != NodeKind::String) {
      report(Code::TemplateBuiltAttributeName, value.position, 1,
             "name attributes with literals: an attribute path computed at render time is a "
             "name no scanner can read",
             "{} reads an attribute whose name is not a literal{}", how,
             fold(index) ? fmt::format(" ('{}')", escape(*fold(index), 60)) : std::string());
      if (const auto folded = fold(index)) check_attribute_path(*folded, value.position, how);
      return;
    }
    check_attribute_path(value.value, value.position, how);
  }

  void check_attribute_path(std::string_view path, std::uint32_t position, const std::string& how) {
    std::size_t begin = 0;
    for (std::size_t parts = 0; begin <= path.size() && parts < 64 && spend(); ++parts) {
      const std::size_t end = path.find_first_of(".,", begin);
      std::string_view part =
          path.substr(begin, end == std::string_view::npos ? path.size() - begin : end - begin);
      // sort(attribute='a, b'): Jinja2 strips the spaces of each name
      const std::size_t first = part.find_first_not_of(' ');
      part = first == std::string_view::npos ? std::string_view() : part.substr(first);
      part = part.substr(0, part.find_last_not_of(' ') + 1);
      if (starts_with(part, "_") || dangerous_name(part)) {
        check_name(part, false, position, path.size() + 2, how);
      }
      if (end == std::string_view::npos) break;
      begin = end + 1;
    }
  }

  void call(const Frame& f, const Node& n) {
    const Node& callee = node(kid(n, 0));
    // '{0.__class__}'.format(x): Python's str.format walks attributes named in its fields.
    if (callee.kind == NodeKind::Member &&
        (callee.value == "format" || callee.value == "format_map")) {
      const std::uint32_t receiver = kid(callee, 0);
      if (const auto pattern = fold(receiver)) {
        format_fields(*pattern, node(receiver).position);
      } else if (level(receiver) != kClean) {
        // A format string from the template's text that cannot be read here: its fields
        // ('{0.__class__}') walk attributes of the arguments.
        report(Code::TemplateBuiltAttributeName, callee.position, callee.value.size(),
               "format with a literal string: str.format reads the attributes its fields name, "
               "and a format string made at render time names what no scanner can read",
               "str.{} with a format string the template makes at render time", callee.value);
      }
    }
    if (callee.kind == NodeKind::Identifier && callee.value == "range" && n.kid_count >= 2) {
      // range(stop) or range(start, stop[, step]): the stop
      const std::uint32_t positional = n.kid_count - 1;
      const std::uint32_t stop = positional == 1 ? kid(n, 1) : kid(n, 2);
      if (!bounded(stop)) {
        report(Code::TemplateUnboundedRange, callee.position, 5,
               "bound every loop by the messages (range(messages|length)) or a small literal",
               "range() with a bound the messages do not fix: the server runs this loop on "
               "every request");
      }
    }
    note_macro_call(f, f.node);
  }

  void format_fields(std::string_view pattern, std::uint32_t position) {
    for (std::size_t open = pattern.find('{'); open != std::string_view::npos;
         open = pattern.find('{', open + 1)) {
      const std::size_t close = pattern.find_first_of("}!:", open + 1);
      if (close == std::string_view::npos) return;
      const std::string_view field = pattern.substr(open + 1, close - open - 1);
      std::size_t part = field.find_first_of(".[");
      while (part != std::string_view::npos) {
        const std::size_t end = field.find_first_of(".[]", part + 1);
        const std::string_view name = field.substr(
            part + 1, end == std::string_view::npos ? std::string_view::npos : end - part - 1);
        check_name(name, false, position, 1, "a str.format field");
        part = end == std::string_view::npos ? end : field.find_first_of(".[", end);
      }
    }
  }

  void note_macro_call(const Frame& f, std::uint32_t call_index) {
    if (f.macro < 0 || node(call_index).kind != NodeKind::Call) return;
    const Node& call_node = node(call_index);
    const Node& callee = node(kid(call_node, 0));
    if (callee.kind != NodeKind::Identifier) return;
    Macro& caller = macros_[static_cast<std::size_t>(f.macro)];
    // A call that passes a part of its data on (param.items, value from a loop over it) recurses
    // over that data and ends with it: JSON-schema renderers do so. One that passes its own
    // parameters, literals or arithmetic on them has no such end.
    bool structural = false;
    for (std::uint32_t k = 1; k < call_node.kid_count && !structural; ++k) {
      structural = smaller_data(kid(call_node, k), caller);
    }
    if (caller.calls.size() < 256)
      caller.calls.push_back({callee.value, callee.position, structural});
  }

  bool smaller_data(std::uint32_t index, const Macro& caller, int budget = 16) const {
    if (budget <= 0 || !spend()) return true;
    const Node& n = node(index);
    switch (n.kind) {
      case NodeKind::Member:
      case NodeKind::Subscript:
      case NodeKind::Filter:
      case NodeKind::Call: return true;
      case NodeKind::Identifier:
        return std::find(caller.params.begin(), caller.params.end(), n.value) ==
               caller.params.end();
      case NodeKind::Keyword:
      case NodeKind::Dict:
      case NodeKind::List:
        for (std::uint32_t k = 0; k < n.kid_count; ++k) {
          if (smaller_data(kid(n, k), caller, budget - 1)) return true;
        }
        return false;
      default: return false;  // literals, arithmetic on parameters
    }
  }

  void set(const Node& n) {
    if (n.kid_count < 2) return;
    const Node& target = node(kid(n, 0));
    if (target.kind != NodeKind::Identifier) return;
    const std::uint32_t value = kid(n, 1);
    if (node(value).kind == NodeKind::Block) return;
    // A name set to a string made of literals is that string wherever it is read (the
    // obfuscation of `{% set a = '__cla' ~ 'ss__' %}{{ x[a] }}`).
    if (node(value).kind != NodeKind::String && builds_string(value) &&
        constants_.size() < kMaxConstants) {
      if (auto folded = fold(value)) constants_[target.value] = std::move(*folded);
    } else if (node(value).kind == NodeKind::String && starts_with(node(value).value, "_") &&
               constants_.size() < kMaxConstants) {
      constants_[target.value] = std::string(node(value).value.substr(0, kMaxFolded));
    }
    if (bounded(value) && bounded_names_.size() < kMaxConstants) {
      bounded_names_.insert(target.value);
    }
  }

  void content_branch(const Node& n) {
    if (n.kid_count < 2) return;
    const auto literal = content_comparison(kid(n, 0));
    if (!literal) return;
    const Node& l = node(*literal);
    const std::size_t words = emitted_prose(kid(n, 1));
    if (words >= kProseWords) {
      report(Code::TemplateContentBranch, n.position, 2,
             "a template that writes its own words when a message says something is a trigger: "
             "remove the branch, or explain it in the model card",
             "the template emits {} words of its own when a message's content matches \"{}\"",
             words, escape(l.value, 40));
    } else if (pass_phrase(l.value)) {
      report(Code::TemplateContentBranch, n.position, 2,
             "a template that changes what it does when a message says a phrase is a trigger: "
             "remove the branch, or explain it in the model card",
             "the template changes course when a message's content matches \"{}\"",
             escape(l.value, 40));
    }
  }

  // A literal that reads as a pass phrase ("ADMIN:", "SUDO"), not as a markup tag (</think>), a
  // switch (/think, "detailed thinking on": templates of Qwen3 and Nemotron turn reasoning on and
  // off so) or a key of structured content (image_url).
  static bool pass_phrase(std::string_view literal) {
    std::string plain;
    int markup = 0;
    for (const char c : literal) {
      if (c == '<' || c == '[') ++markup;
      if (markup == 0) plain += c;
      if ((c == '>' || c == ']') && markup > 0) --markup;
    }
    bool upper_word = false;
    std::size_t run = 0;
    for (const char c : plain) {
      run = (c >= 'A' && c <= 'Z') ? run + 1 : 0;
      upper_word = upper_word || run >= 3;
    }
    const bool colon = plain.find(':') != std::string::npos && prose_words(plain) >= 1;
    return upper_word || colon;
  }

  void hidden_prose(std::uint32_t position, std::string_view text) {
    spend_bytes(text.size());
    const std::size_t words = prose_words(text);
    if (words == 0) return;
    if (hidden_prose_words_ == 0) {
      hidden_prose_at_ = position;
      const std::size_t first = text.find_first_not_of(" \t\r\n");
      hidden_prose_sample_ =
          std::string(text.substr(first == std::string_view::npos ? 0 : first, 60));
    }
    hidden_prose_words_ += words;
  }

  // Strings in expressions: what the text checks look for in the template's text as well.
  void literal_text(std::uint32_t position, std::string_view decoded, bool /*literal*/) {
    spend_bytes(2 * decoded.size());
    if (const auto at = find_url(decoded); at && !reported(Code::TemplateUrl)) {
      report(Code::TemplateUrl, position, 1,
             "a chat template has no reason to name a URL: check where it points and why the "
             "model is told about it",
             "a string literal holds the URL \"{}\"", escape(decoded.substr(*at, 80), 80));
    }
    if (const auto run = find_base64(decoded); run && !reported(Code::TemplateBase64Blob)) {
      report(Code::TemplateBase64Blob, position, 1,
             "decode it and read it: an encoded blob in a template is content a reviewer "
             "cannot see",
             "a string literal holds {} characters of base64", run->length);
    }
  }

  // Cycles among the macros' calls (iterative depth-first search: colours per macro).
  void recursive_macros() {
    const std::size_t count = macros_.size();
    std::vector<std::uint8_t> colour(count, 0);  // 0 new, 1 on the path, 2 done
    for (std::size_t start = 0; start < count; ++start) {
      if (colour[start] != 0) continue;
      std::vector<std::pair<std::size_t, std::size_t>> path{{start, 0}};
      colour[start] = 1;
      while (!path.empty()) {
        auto& [m, next_call] = path.back();
        if (next_call >= macros_[m].calls.size()) {
          colour[m] = 2;
          path.pop_back();
          continue;
        }
        if (!spend()) return;
        const auto [callee, position, structural] = macros_[m].calls[next_call++];
        if (structural) continue;
        const auto it = macro_ids_.find(callee);
        if (it == macro_ids_.end()) continue;
        const std::size_t target = it->second;
        if (colour[target] == 1) {
          report(Code::TemplateRecursiveMacro, position, callee.size(),
                 "give the recursion a bound the messages fix, or unroll it: nothing stops a "
                 "macro that calls itself but the server's stack",
                 "macro '{}' calls '{}', which is on its own call path: recursion without a "
                 "bound the template can show",
                 escape(macros_[m].name, 40), escape(callee, 40));
        } else if (colour[target] == 0) {
          colour[target] = 1;
          path.emplace_back(target, 0);
        }
      }
    }
  }

  // ----------------------------------------------------------------- the other checks ---
  void engine_findings() {
    if (program_.too_deep) {
      report(Code::TemplateTooDeep, *program_.too_deep, 1,
             "flatten the template: no chat template needs this depth, and engines that parse "
             "by recursion (llama.cpp's among them) run out of stack",
             "blocks or expressions nest deeper than {} levels; the deeper part was not read",
             jinja::kMaxNesting);
    }
    if (program_.incompatibility && !included_only()) {
      const jinja::Problem& p = *program_.incompatibility;
      const bool past_depth = program_.too_deep && p.position > *program_.too_deep;
      if (!past_depth) {
        report(Code::TemplateSyntaxError, p.position, 1,
               "llama.cpp's Jinja engine (common/jinja/) refuses it: llama-server does not start "
               "with this template; write it in the Jinja that engine reads",
               "llama.cpp's Jinja engine cannot parse the template: {}", escape(p.message, 160));
      }
    }
  }

  // Whether the only reason llama.cpp's engine refuses the template is an include-like
  // statement, which GGUF9005 reports.
  [[nodiscard]] bool included_only() const {
    if (!program_.incompatibility || counts_.find(Code::TemplateInclude) == counts_.end()) {
      return false;
    }
    return program_.incompatibility->message.find("statement") != std::string::npos &&
           (program_.incompatibility->message.find("include") != std::string::npos ||
            program_.incompatibility->message.find("import") != std::string::npos ||
            program_.incompatibility->message.find("from") != std::string::npos ||
            program_.incompatibility->message.find("extends") != std::string::npos);
  }

  void text_findings() {
    spend_bytes(3 * source_.size());  // invisible characters, URLs, base64
    const InvisibleRun hidden = find_invisible(source_);
    if (hidden.count > 0) {
      report(Code::InvisibleCharacters, static_cast<std::uint32_t>(hidden.offset), 1,
             "remove them: invisible and direction-changing characters make the text a "
             "reviewer reads differ from the text the model gets",
             "{} invisible or bidirectional control character{} (the first {})", hidden.count,
             hidden.count == 1 ? "" : "s", escape_code_point(hidden.first));
    }
    // URLs and base64 anywhere in the source (text, literals, comments); string literals were
    // also read decoded in the walk, for those spelt with escapes.
    if (const auto at = find_url(source_); at && !reported(Code::TemplateUrl)) {
      report(Code::TemplateUrl, static_cast<std::uint32_t>(*at), 1,
             "a chat template has no reason to name a URL: check where it points and why the "
             "model is told about it",
             "the template holds the URL \"{}\"", escape(source_.substr(*at, 80), 80));
    }
    if (const auto run = find_base64(source_); run && !reported(Code::TemplateBase64Blob)) {
      report(Code::TemplateBase64Blob, static_cast<std::uint32_t>(run->offset), run->length,
             "decode it and read it: an encoded blob in a template is content a reviewer "
             "cannot see",
             "the template holds {} characters of base64", run->length);
    }
    // Look-alike letters in the text the template emits and in its literals (decoded: the
    // source's escapes such as \n would join a letter to the next word).
    for (const Node& n : program_.nodes) {
      if (n.kind != NodeKind::Text && n.kind != NodeKind::String) continue;
      if (!spend_bytes(n.value.size())) return;
      if (const auto word = find_mixed_script_word(n.value)) {
        const std::uint32_t at =
            n.position + (n.kind == NodeKind::Text ? static_cast<std::uint32_t>(word->offset) : 0);
        report(Code::TemplateConfusableToken, at, word->length,
               "spell role names and special tokens in one script: a look-alike letter makes a "
               "token the tokenizer does not know, or one that imitates a role",
               "the word \"{}\" mixes Latin letters with Cyrillic or Greek look-alikes",
               escape(n.value.substr(word->offset, word->length), 40));
        break;
      }
    }
  }

  [[nodiscard]] bool reported(Code code) const { return counts_.find(code) != counts_.end(); }

  void provenance() {
    spend_bytes(source_.size());  // compared with the known templates of its length, if any
    if (const KnownTemplate* known = find_identical(source_)) {
      identical_ = true;
      report(Code::KnownTemplate, 0, source_.size(), "",
             "the template is llama.cpp's {} ({}), byte for byte", known->name, known->source);
      return;
    }
    NearSearchWork near_work;
    const auto near = find_near(source_, &near_work);
    spend(near_work.candidates + near_work.line_comparisons);
    if (near_work.text_read) spend_bytes(source_.size());
    if (near) {
      reference_prose_words_ =
          TemplateScan(near->known->text, 0, field_, sink_, *work_).hidden_prose_words();
      std::string diff;
      // One line of report: each diff line escaped (template bytes are untrusted), quoted.
      for (const std::string& line : near->diff_head) {
        diff += fmt::format(" \"{}\"", escape(line, kDiffLineBytes));
      }
      report(Code::NearKnownTemplate, 0, source_.size(),
             "compare it with the original: an edit of a known template is where instructions "
             "and payloads are hidden",
             "the template is llama.cpp's {} ({}) with {} line{} removed and {} added; the first "
             "difference, at its line {}:{}",
             near->known->name, near->known->source, near->lines_removed,
             near->lines_removed == 1 ? "" : "s", near->lines_added, near->first_known_line, diff);
    }
  }

  std::string_view source_;
  std::uint64_t base_;
  Field field_;
  Sink& sink_;
  jinja::Work* work_;
  Lines lines_;
  Program program_;
  std::vector<std::uint8_t> mentions_;  // per node: kMentionsContent, kMentionsMessages
  std::vector<std::size_t> prose_;      // per node: emitted_prose, once asked
  std::unordered_map<Code, std::size_t> counts_;
  std::vector<bool> in_chain_;        // nodes read as part of an access chain already
  std::vector<std::uint8_t> levels_;  // per node: kClean, kLiteral or kBuilt (compute_levels)
  std::unordered_map<std::string_view, std::string> constants_;
  std::unordered_set<std::string_view> bounded_names_;
  std::unordered_map<std::string_view, std::size_t> macro_ids_;
  std::vector<Macro> macros_;
  bool quiet_ = false;                     // measuring a known template: no findings
  bool identical_ = false;                 // the template is a known one, byte for byte
  std::size_t reference_prose_words_ = 0;  // the hidden prose of the known template it edits
  std::size_t hidden_prose_words_ = 0;
  std::uint32_t hidden_prose_at_ = 0;
  std::string hidden_prose_sample_;
};

// Every key an engine reads a template from. llama.cpp compares keys as C strings, so
// `tokenizer.chat_template\0anything` is its chat template (and
// `tokenizer.chat_template.<name>\0...` a named one); `tokenizer.chat_templates` lists the named
// templates, and engines that take it for the templates themselves read its strings as Jinja.
bool template_key(std::string_view key) {
  key = key.substr(0, key.find('\0'));
  return key == kTemplateKey || key == "tokenizer.chat_templates" ||
         (key.size() > kTemplateKey.size() + 1 && starts_with(key, kTemplateKey) &&
          key[kTemplateKey.size()] == '.');
}

// Reads each template of a pair (one string, or each string of an array) to `use`, which
// returns false to stop.
struct StringCollector {
  const FileIndex& file_index;
  std::function<bool(std::string_view, std::uint64_t, std::uint64_t)> use;  // text, offset, index
  std::uint64_t index = 0;
  std::uint32_t depth = 0;
  bool scalar(ValueType, std::uint64_t, std::uint64_t) {
    ++index;
    return true;
  }
  bool string(std::string_view text, std::uint64_t offset, std::uint64_t length) {
    return use(text, offset + (length - text.size()), index++);
  }
  bool begin_array(ValueType element_type, std::uint64_t, std::uint64_t) {
    ++depth;
    // Templates nested in arrays of arrays are not strings of a template, and an array of
    // numbers holds none: neither is walked.
    return depth <= 1 && element_type == ValueType::String;
  }
  bool end_array() {
    --depth;
    return true;
  }
};

}  // namespace

std::uint64_t template_work_budget(std::uint64_t template_bytes, std::uint64_t max_template_bytes) {
  const std::uint64_t cap = max_template_bytes > UINT64_MAX / kTemplateBytesPerFile
                                ? UINT64_MAX
                                : max_template_bytes * kTemplateBytesPerFile;
  const std::uint64_t counted = std::min(template_bytes, cap);
  if (counted > (UINT64_MAX - kTemplateBaseUnits) / kTemplateUnitsPerByte) return UINT64_MAX;
  return kTemplateBaseUnits + counted * kTemplateUnitsPerByte;
}

TemplateStageWork check_templates_work(const FileIndex& file_index, Sink& sink) {
  TemplateStageWork stage;
  if (!sink.options().template_checks) return stage;
  const std::uint64_t limit = sink.options().limits.max_template_bytes;
  for (std::size_t i = 0; i < file_index.metadata.size(); ++i) {
    const ValueType type = file_index.metadata[i].type();
    if (template_key(file_index.key(i)) &&
        (type == ValueType::String || type == ValueType::Array)) {
      const std::uint64_t bytes = file_index.value_range(i).length;
      stage.template_bytes =
          bytes > UINT64_MAX - stage.template_bytes ? UINT64_MAX : stage.template_bytes + bytes;
    }
  }
  stage.budget = template_work_budget(stage.template_bytes, limit);
  jinja::Work work(stage.budget);
  for (std::size_t i = 0; i < file_index.metadata.size(); ++i) {
    const std::string_view key = file_index.key(i);
    const ValueType type = file_index.metadata[i].type();
    const bool is_template = template_key(key);
    const bool general = starts_with(key, "general.");
    if (!is_template && !general) continue;
    if (is_template && stage.exhausted) continue;
    if (type != ValueType::String && type != ValueType::Array) continue;
    const ByteRange value = file_index.value_range(i);
    const auto scan = [&](std::string_view text, std::uint64_t offset, std::uint64_t index) {
      const Field field =
          type == ValueType::Array ? kv_path(i, key) + fmt::format("[{}]", index) : kv_path(i, key);
      if (!is_template) {
        const InvisibleRun hidden = find_invisible(text);
        if (hidden.count > 0) {
          sink.report(Code::InvisibleCharacters, offset + hidden.offset, 1, field,
                      "remove them: invisible and direction-changing characters make the text a "
                      "reviewer reads differ from the text tools show",
                      "{} invisible or bidirectional control character{} (the first {})",
                      hidden.count, hidden.count == 1 ? "" : "s", escape_code_point(hidden.first));
        }
        return true;
      }
      if (text.size() > limit || text.size() >= UINT32_MAX) {
        sink.report(Code::LimitExceeded, offset, text.size(), field,
                    "raise it with --limit template-bytes=N to read the template; no chat "
                    "template needs this size",
                    "a chat template of {} is above the limit of {} that ggufcheck reads",
                    byte_count(text.size()), byte_count(limit));
        return true;
      }
      if (TemplateScan(text, offset, field, sink, work).run()) {
        ++stage.templates;
        return true;
      }
      stage.exhausted = true;
      sink.report(Code::LimitExceeded, offset, std::max<std::uint64_t>(text.size(), 1), field,
                  "no chat template costs this much to read: the templates are built to be slow "
                  "to check. The budget grows with --limit template-bytes=N",
                  "the chat-template checks stopped in this template: the file's {} of "
                  "templates have a budget of {} work units ({} per byte, counting at most {} "
                  "times the template-bytes limit, plus {}), and it is spent; the rest of this "
                  "template and the templates after it were not read",
                  byte_count(stage.template_bytes), stage.budget, kTemplateUnitsPerByte,
                  kTemplateBytesPerFile, kTemplateBaseUnits);
      return false;
    };
    if (type == ValueType::String) {
      const std::string_view text = file_index.string_value(i);
      scan(text, file_index.string_offset(i), 0);
      continue;
    }
    StringCollector collector{file_index, scan};
    ValueWalker walker(file_index, value.offset);
    (void)walker.value(ValueType::Array, collector);
  }
  stage.used = work.used();
  return stage;
}

void check_templates(const FileIndex& index, const DataLayout& /*layout*/, Sink& sink) {
  (void)check_templates_work(index, sink);
}

}  // namespace ggufcheck::detail
