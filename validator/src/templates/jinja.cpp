#include "templates/jinja.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <initializer_list>

namespace ggufcheck::detail::jinja {

namespace {

// ----------------------------------------------------------------------------------- lexer ---

enum class Tok : std::uint8_t {
  Text,
  OpenExpression,  // {{
  CloseExpression,
  OpenStatement,  // {%
  CloseStatement,
  Identifier,
  String,
  Number,
  Operator,  // value: the operator's characters
  End,
};

struct Token {
  Tok kind = Tok::End;
  std::uint32_t position = 0;
  std::string_view value;  // the text, identifier, operator or number; a string's decoded bytes
  // A + or - right after a name, number, string, ) or ]: llama.cpp's lexer makes it a binary
  // operator whatever the grammar says (`not -x`, `'a' if -1` fail there).
  bool binary_sign = false;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}
bool is_high(char c) {
  return static_cast<unsigned char>(c) >= 0x80;
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

// Two- then one-character operators, longest first.
constexpr std::array<std::string_view, 8> kTwoCharOperators = {
    "**", "//", "==", "!=", "<=", ">=", "{{", "{%"};
constexpr std::string_view kOneCharOperators = "()[]{},.:|<>+-~*/%=";

class Lexer {
 public:
  Lexer(std::string_view source, Program& program, Work* work)
      : src_(source), program_(program), work_(work) {}

  std::vector<Token> run() {
    while (pos_ < src_.size() && !program_.stopped) {
      if (!text() || program_.stopped) break;
      tag();
    }
    tokens_.push_back({Tok::End, static_cast<std::uint32_t>(src_.size()), {}});
    return std::move(tokens_);
  }

 private:
  // Problems: only the first of each kind is kept, so a message is formatted only while its
  // place is free (a template of a million errors formats one).
  void incompatible(std::size_t at, std::string_view message) {
    if (!program_.incompatibility) {
      program_.incompatibility = Problem{static_cast<std::uint32_t>(at), std::string(message)};
    }
  }
  template <typename Arg, typename... Args>
  void incompatible(std::size_t at, fmt::format_string<Arg, Args...> format, Arg&& arg,
                    Args&&... args) {
    if (!program_.incompatibility) {
      incompatible(at, fmt::format(format, std::forward<Arg>(arg), std::forward<Args>(args)...));
    }
  }
  void error(std::size_t at, std::string_view message) {
    incompatible(at, message);
    if (!program_.syntax_error) {
      program_.syntax_error = Problem{static_cast<std::uint32_t>(at), std::string(message)};
    }
  }
  template <typename Arg, typename... Args>
  void error(std::size_t at, fmt::format_string<Arg, Args...> format, Arg&& arg, Args&&... args) {
    if (!program_.incompatibility || !program_.syntax_error) {
      error(at, fmt::format(format, std::forward<Arg>(arg), std::forward<Args>(args)...));
    }
  }
  [[nodiscard]] bool at(std::string_view s) const { return src_.substr(pos_, s.size()) == s; }
  // One unit of work per token; where the budget runs out the lexer stops (the tokens so far
  // are read).
  void push(Tok kind, std::size_t begin, std::string_view value) {
    tokens_.push_back({kind, static_cast<std::uint32_t>(begin), value});
    if (work_ != nullptr && !work_->spend()) program_.stopped = true;
  }

  // Text up to the next tag; comments are skipped. False at the end of the source.
  bool text() {
    while (pos_ < src_.size()) {
      const std::size_t begin = pos_;
      std::size_t next = src_.find('{', pos_);
      while (next != std::string_view::npos && next + 1 < src_.size() && src_[next + 1] != '{' &&
             src_[next + 1] != '%' && src_[next + 1] != '#') {
        next = src_.find('{', next + 1);
      }
      if (next == std::string_view::npos || next + 1 >= src_.size()) next = src_.size();
      if (next > begin) push(Tok::Text, begin, src_.substr(begin, next - begin));
      pos_ = next;
      if (pos_ >= src_.size()) return false;
      if (src_[pos_ + 1] != '#') return true;
      const std::size_t close = src_.find("#}", pos_ + 2);
      if (close == std::string_view::npos) {
        error(pos_, "a comment {# is never closed with #}");
        pos_ = src_.size();
        return false;
      }
      pos_ = close + 2;
    }
    return false;
  }

  // One {{ ... }} or {% ... %} tag.
  void tag() {
    const bool statement = src_[pos_ + 1] == '%';
    const std::size_t open = pos_;
    push(statement ? Tok::OpenStatement : Tok::OpenExpression, pos_, src_.substr(pos_, 2));
    pos_ += 2;
    if (pos_ < src_.size() && src_[pos_] == '-') {
      ++pos_;
    } else if (pos_ < src_.size() && src_[pos_] == '+') {
      incompatible(pos_, "'+' after a tag's opening (llama.cpp reads a unary plus)");
      ++pos_;
    }
    const std::size_t first_token = tokens_.size();
    int braces = 0;
    while (!program_.stopped) {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size()) {
        error(open,
              statement ? "a tag {% is never closed with %}" : "a tag {{ is never closed with }}");
        return;
      }
      const char c = src_[pos_];
      // The tag's end, with its whitespace control.
      const std::size_t mark = (c == '-' || c == '+') ? 1 : 0;
      if (statement && src_.substr(pos_ + mark, 2) == "%}") {
        push(Tok::CloseStatement, pos_, src_.substr(pos_, mark + 2));
        pos_ += mark + 2;
        if (tokens_.size() == first_token + 2 && tokens_[first_token].kind == Tok::Identifier &&
            tokens_[first_token].value == "raw") {
          raw_block();
        }
        return;
      }
      if (!statement && braces == 0 && src_.substr(pos_ + mark, 2) == "}}" && c != '+') {
        push(Tok::CloseExpression, pos_, src_.substr(pos_, mark + 2));
        pos_ += mark + 2;
        return;
      }
      if (c == '\'' || c == '"') {
        if (!string_literal()) return;
        continue;
      }
      if (is_digit(c)) {
        number();
        continue;
      }
      if (is_ascii_word(c) || is_high(c)) {
        const std::size_t begin = pos_;
        bool high = false;
        while (pos_ < src_.size() && (is_ascii_word(src_[pos_]) || is_high(src_[pos_]))) {
          high = high || is_high(src_[pos_]);
          ++pos_;
        }
        if (high) incompatible(begin, "a name with non-ASCII characters");
        push(Tok::Identifier, begin, src_.substr(begin, pos_ - begin));
        continue;
      }
      std::string_view op;
      for (const std::string_view two : kTwoCharOperators) {
        if (at(two)) op = two;
      }
      if (op == "{{" || op == "{%") {
        error(pos_, "'{}' inside a tag that is not closed", op);
        // Resume as if the open tag had ended here.
        return;
      }
      if (op.empty() && kOneCharOperators.find(c) != std::string_view::npos) {
        op = src_.substr(pos_, 1);
      }
      if (op.empty()) {
        if (!program_.syntax_error) error(pos_, "unexpected character '{}'", escape_char(c));
        ++pos_;
        continue;
      }
      if (op == "**" || op == "//") incompatible(pos_, "operator '{}'", op);
      if (op == "{") ++braces;
      if (op == "}" && braces > 0) --braces;
      const bool sign = op == "+" || op == "-";
      const Token& before = tokens_.back();
      const bool after_value =
          before.kind == Tok::Identifier || before.kind == Tok::Number ||
          before.kind == Tok::String ||
          (before.kind == Tok::Operator && (before.value == ")" || before.value == "]"));
      push(Tok::Operator, pos_, src_.substr(pos_, op.size()));
      tokens_.back().binary_sign = sign && after_value;
      pos_ += op.size();
    }
  }

  static std::string escape_char(char c) {
    if (static_cast<unsigned char>(c) < 0x20 || is_high(c)) {
      return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
    return std::string(1, c);
  }

  // {% raw %} ... {% endraw %}: the bytes between are text (Jinja2; llama.cpp has no raw).
  void raw_block() {
    incompatible(tokens_[tokens_.size() - 3].position, "the raw statement");
    std::size_t search = pos_;
    while (true) {
      const std::size_t open = src_.find("{%", search);
      if (open == std::string_view::npos) {
        error(tokens_[tokens_.size() - 3].position, "a raw block is never closed with endraw");
        push(Tok::Text, pos_, src_.substr(pos_));
        pos_ = src_.size();
        return;
      }
      std::size_t p = open + 2;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
      while (p < src_.size() && is_space(src_[p])) ++p;
      if (src_.substr(p, 6) == "endraw") {
        if (open > pos_) push(Tok::Text, pos_, src_.substr(pos_, open - pos_));
        pos_ = open;  // the {% endraw %} tag is read as a tag
        return;
      }
      search = open + 2;
    }
  }

  // A quoted literal, decoded as Jinja2 decodes it; escapes llama.cpp's lexer does not know are
  // recorded. False when it is not closed (the rest of the template is then unread).
  bool string_literal() {
    const char quote = src_[pos_];
    const std::size_t begin = pos_;
    std::string decoded;
    ++pos_;
    while (pos_ < src_.size() && src_[pos_] != quote) {
      if (src_[pos_] != '\\') {
        decoded += src_[pos_++];
        continue;
      }
      const std::size_t escape_at = pos_;
      ++pos_;
      if (pos_ >= src_.size()) break;
      const char e = src_[pos_++];
      switch (e) {
        case 'n': decoded += '\n'; break;
        case 't': decoded += '\t'; break;
        case 'r': decoded += '\r'; break;
        case 'b': decoded += '\b'; break;
        case 'f': decoded += '\f'; break;
        case 'v': decoded += '\v'; break;
        case '\\':
        case '\'':
        case '"': decoded += e; break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          std::uint32_t value = 0;
          std::size_t n = 0;
          while (n < digits && pos_ < src_.size() &&
                 std::isxdigit(static_cast<unsigned char>(src_[pos_]))) {
            const char h = src_[pos_++];
            value = value * 16 +
                    static_cast<std::uint32_t>(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
            ++n;
          }
          incompatible(escape_at,
                       "escape \\{} (llama.cpp knows \\n \\t \\r \\b \\f \\v \\\\ \\' \\\")", e);
          if (n == digits && value <= 0x10FFFF) append_utf8(decoded, value);
          break;
        }
        default:
          if (!program_.incompatibility) {
            incompatible(escape_at,
                         "escape \\{} (llama.cpp knows \\n \\t \\r \\b \\f \\v \\\\ \\' \\\")",
                         escape_char(e));
          }
          if (e >= '0' && e <= '7') {
            std::uint32_t value = static_cast<std::uint32_t>(e - '0');
            for (int n = 0; n < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7';
                 ++n) {
              value = value * 8 + static_cast<std::uint32_t>(src_[pos_++] - '0');
            }
            append_utf8(decoded, value);
          } else if (e == '\n') {
            // a line continuation: nothing
          } else {
            decoded += '\\';
            decoded += e;
          }
      }
    }
    if (pos_ >= src_.size()) {
      error(begin, "a string literal is never closed");
      return false;
    }
    ++pos_;  // the closing quote
    program_.strings.push_back(std::move(decoded));
    push(Tok::String, begin, program_.strings.back());
    return true;
  }

  void number() {
    const std::size_t begin = pos_;
    while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      ++pos_;
      while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
    }
    // Jinja2 reads 1_000, 1e9 and 0x1f as one number; llama.cpp stops at the digits (and then
    // fails on what follows). Anything else after the digits is a name of its own in both.
    const std::size_t plain_end = pos_;
    const auto digits_from = [&](std::size_t at, auto digit) {
      std::size_t end = at;
      while (end < src_.size() && (digit(src_[end]) || (src_[end] == '_' && end > at))) ++end;
      return end > at ? end : std::size_t{0};
    };
    std::size_t extended = 0;
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      std::size_t at = pos_ + 1;
      if (at < src_.size() && (src_[at] == '+' || src_[at] == '-')) ++at;
      extended = digits_from(at, is_digit);
    } else if (pos_ < src_.size() && src_[pos_] == '_') {
      extended = digits_from(pos_ + 1, is_digit);
    } else if (pos_ == begin + 1 && src_[begin] == '0' && pos_ < src_.size() &&
               (src_[pos_] == 'x' || src_[pos_] == 'X' || src_[pos_] == 'o' || src_[pos_] == 'b')) {
      extended = digits_from(
          pos_ + 1, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
    }
    if (extended != 0) {
      pos_ = extended;
      incompatible(begin, "number '{}' (llama.cpp reads digits and one decimal point)",
                   src_.substr(begin, pos_ - begin));
    } else if (src_.substr(begin, plain_end - begin).find('.') == std::string_view::npos &&
               exceeds_int64(src_.substr(begin, plain_end - begin))) {
      incompatible(begin, "an integer literal beyond 64 bits");
    }
    push(Tok::Number, begin, src_.substr(begin, pos_ - begin));
  }

  static bool exceeds_int64(std::string_view digits) {
    while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
    constexpr std::string_view kMax = "9223372036854775807";
    return digits.size() > kMax.size() || (digits.size() == kMax.size() && digits > kMax);
  }

  std::string_view src_;
  Program& program_;
  Work* work_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------- parser ---

// Why the parser is unwinding: while it does, it reads no token (the next one is always the
// end), records no problem and calls nothing that recurses without reading a token, so each
// function returns at once with what it has made. No exceptions: a template of a million
// syntax errors costs the tokens it reads, not a million stack unwinds.
enum class Halt : std::uint8_t {
  None,
  Error,    // a syntax error (recorded): the nearest block, or the top level, resumes after the tag
  TooDeep,  // nesting past kMaxNesting: the top level resumes after the tag
  Stopped,  // the work budget ran out: the reading ends
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, Program& program, Work* work)
      : tokens_(std::move(tokens)), program_(program), work_(work) {
    if (program_.stopped) halt_ = Halt::Stopped;  // the lexer ran out first
  }

  void run() {
    const std::size_t mark = scratch_.size();
    while (halt_ != Halt::Stopped && peek().kind != Tok::End) {
      const std::size_t before = current_;
      item();
      if (halt_ == Halt::Error || halt_ == Halt::TooDeep) resume(before);
    }
    scratch_.insert(scratch_.end(), loose_.begin(), loose_.end());
    halt_ = Halt::None;  // the root is made whatever stopped the reading
    program_.root = make(NodeKind::Block, 0, {}, mark);
  }

 private:
  // ------------------------------------------------------------------ tokens and nodes ---
  [[nodiscard]] const Token& peek(std::size_t ahead = 0) const {
    if (halt_ != Halt::None) return tokens_.back();  // the end
    return tokens_[std::min(current_ + ahead, tokens_.size() - 1)];
  }
  const Token& next() {
    const Token& t = peek();
    if (halt_ != Halt::None) return t;
    if (current_ + 1 < tokens_.size()) ++current_;
    spend();
    return t;
  }
  // One unit of work per token read and per node made; none once stopped (the nodes the
  // unwinding makes are the last).
  void spend() {
    if (work_ == nullptr || halt_ == Halt::Stopped) return;
    if (!work_->spend()) {
      halt_ = Halt::Stopped;
      program_.stopped = true;
    }
  }
  // After an error or too deep a nesting: on past the tag it happened in.
  void resume(std::size_t before) {
    halt_ = Halt::None;
    if (current_ == before) next();
    skip_tag();
  }
  [[nodiscard]] bool is_op(std::string_view op, std::size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Operator && peek(ahead).value == op;
  }
  [[nodiscard]] bool is_name(std::string_view name, std::size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Identifier && peek(ahead).value == name;
  }
  void expect_op(std::string_view op) {
    if (!is_op(op)) {
      fail("expected '{}'", op);
      return;
    }
    next();
  }
  void expect_close() {
    if (peek().kind != Tok::CloseStatement) {
      fail("expected %}");
      return;
    }
    next();
  }

  // Problems. Only the first of each kind is kept, so a message is formatted only while its
  // place is free; nothing is recorded while the parser unwinds.
  [[nodiscard]] bool recording(bool incompatibility, bool syntax_error) const {
    return halt_ == Halt::None && ((incompatibility && !program_.incompatibility) ||
                                   (syntax_error && !program_.syntax_error));
  }
  // A syntax error at the current token ("expected X, found Y"): recorded, then the parser
  // unwinds to the nearest block, which resumes after the tag (Halt::Error).
  void fail(std::string_view message) {
    if (halt_ != Halt::None) return;
    if (recording(true, true)) {
      const Token& t = peek();
      std::string got;
      switch (t.kind) {
        case Tok::End: got = "the end of the template"; break;
        case Tok::Text: got = "text"; break;
        case Tok::CloseStatement: got = "%}"; break;
        case Tok::CloseExpression: got = "}}"; break;
        case Tok::OpenStatement: got = "{%"; break;
        case Tok::OpenExpression: got = "{{"; break;
        default: got = fmt::format("'{}'", t.value.substr(0, 40));
      }
      record(t.position, fmt::format("{}, found {}", message, got));
    }
    halt_ = Halt::Error;
  }
  template <typename Arg, typename... Args>
  void fail(fmt::format_string<Arg, Args...> format, Arg&& arg, Args&&... args) {
    if (halt_ != Halt::None) return;
    if (!recording(true, true)) {
      halt_ = Halt::Error;
      return;
    }
    fail(fmt::format(format, std::forward<Arg>(arg), std::forward<Args>(args)...));
  }
  // A syntax error at a position of its own, message as it is.
  void fail_at(std::uint32_t position, std::string_view message) {
    if (halt_ != Halt::None) return;
    record(position, message);
    halt_ = Halt::Error;
  }
  void record(std::uint32_t position, std::string_view message) {
    if (halt_ != Halt::None) return;
    if (!program_.incompatibility)
      program_.incompatibility = Problem{position, std::string(message)};
    if (!program_.syntax_error) program_.syntax_error = Problem{position, std::string(message)};
  }
  void incompatible(std::uint32_t position, std::string_view message) {
    if (recording(true, false)) program_.incompatibility = Problem{position, std::string(message)};
  }
  template <typename Arg, typename... Args>
  void incompatible(std::uint32_t position, fmt::format_string<Arg, Args...> format, Arg&& arg,
                    Args&&... args) {
    if (recording(true, false)) {
      incompatible(position,
                   fmt::format(format, std::forward<Arg>(arg), std::forward<Args>(args)...));
    }
  }
  // Jinja2 refuses it, llama.cpp's engine reads on (a missing comma between arguments).
  void jinja2_error(std::uint32_t position, std::string_view message) {
    if (recording(false, true)) program_.syntax_error = Problem{position, std::string(message)};
  }
  template <typename Arg, typename... Args>
  void jinja2_error(std::uint32_t position, fmt::format_string<Arg, Args...> format, Arg&& arg,
                    Args&&... args) {
    if (recording(false, true)) {
      jinja2_error(position,
                   fmt::format(format, std::forward<Arg>(arg), std::forward<Args>(args)...));
    }
  }
  // Skips to just after the end of the tag the parser is in (or to the next tag's start).
  void skip_tag() {
    while (true) {
      const Tok kind = peek().kind;
      if (kind == Tok::End) return;
      if (kind == Tok::CloseStatement || kind == Tok::CloseExpression) {
        next();
        return;
      }
      if ((kind == Tok::Text || kind == Tok::OpenStatement || kind == Tok::OpenExpression) &&
          current_ > skip_floor_) {
        return;
      }
      next();
    }
  }

  // A node whose kids are scratch_[mark...]; they move to the program.
  std::uint32_t make(NodeKind kind, std::uint32_t position, std::string_view value,
                     std::size_t mark) {
    Node n;
    n.kind = kind;
    n.position = position;
    n.value = value;
    n.first_kid = static_cast<std::uint32_t>(program_.kids.size());
    n.kid_count = static_cast<std::uint32_t>(scratch_.size() - mark);
    program_.kids.insert(program_.kids.end(), scratch_.begin() + static_cast<std::ptrdiff_t>(mark),
                         scratch_.end());
    scratch_.resize(mark);
    program_.nodes.push_back(n);
    spend();
    return static_cast<std::uint32_t>(program_.nodes.size() - 1);
  }
  std::uint32_t leaf(NodeKind kind, std::uint32_t position, std::string_view value = {}) {
    return make(kind, position, value, scratch_.size());
  }

  class Deeper {
   public:
    Deeper(Parser& parser, std::uint32_t position) : parser_(parser) {
      if (++parser_.depth_ > kMaxNesting && parser_.halt_ == Halt::None) {
        parser_.halt_ = Halt::TooDeep;
        if (!parser_.program_.too_deep) parser_.program_.too_deep = position;
      }
    }
    ~Deeper() { --parser_.depth_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;

   private:
    Parser& parser_;
  };

  // ---------------------------------------------------------------------- statements ---
  [[nodiscard]] bool at_statement(std::initializer_list<std::string_view> names) const {
    if (peek().kind != Tok::OpenStatement || peek(1).kind != Tok::Identifier) return false;
    return std::find(names.begin(), names.end(), peek(1).value) != names.end();
  }

  // Items up to one of `ends` (a statement), pushed on the scratch stack from `mark`.
  // Returns with the parser at that {% end... tag, or at the end of the template.
  void items(std::initializer_list<std::string_view> ends, std::uint32_t opened_at,
             std::string_view what) {
    while (halt_ == Halt::None) {
      if (peek().kind == Tok::End) {
        if (recording(true, true)) {
          record(opened_at,
                 fmt::format("{} is never closed (expected {{% {} %}})", what, *ends.begin()));
        }
        return;
      }
      if (at_statement(ends)) return;
      const std::size_t before = current_;
      item();
      if (halt_ == Halt::Error) resume(before);  // too deep or stopped: on to the top level
    }
  }

  // One text, {{ expression }} or {% statement %}, pushed on the scratch stack.
  void item() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Text: {
        next();
        scratch_.push_back(leaf(NodeKind::Text, t.position, t.value));
        return;
      }
      case Tok::OpenExpression: {
        next();
        skip_floor_ = current_;
        const std::size_t mark = scratch_.size();
        scratch_.push_back(expression());
        if (peek().kind != Tok::CloseExpression) {
          fail("expected }}");  // the expression stays, read, in the enclosing block
          return;
        }
        next();
        scratch_.push_back(make(NodeKind::Output, t.position, {}, mark));
        return;
      }
      case Tok::OpenStatement: {
        next();
        skip_floor_ = current_;
        scratch_.push_back(statement(t.position));
        return;
      }
      default: {
        const std::uint32_t position = t.position;
        next();
        fail_at(position, "a tag's end with no tag open");
        return;
      }
    }
  }

  // A block body up to one of `ends`, as a Block node (pushed on the scratch stack).
  void block(std::initializer_list<std::string_view> ends, std::uint32_t opened_at,
             std::string_view what) {
    Deeper deeper(*this, opened_at);
    const std::size_t mark = scratch_.size();
    items(ends, opened_at, what);
    scratch_.push_back(make(NodeKind::Block, opened_at, {}, mark));
  }

  // {% name %} with the parser at the end keyword's {%.
  void end_tag(std::string_view name) {
    if (peek().kind == Tok::End) return;  // recorded by items()
    next();                               // {%
    if (!is_name(name)) {
      fail("expected {}", name);
      return;
    }
    next();
    // Jinja2 allows {% endblock name %} and {% endmacro name %}.
    if (peek().kind == Tok::Identifier) {
      incompatible(peek().position, "a name after {}", name);
      next();
    }
    expect_close();
  }

  std::uint32_t statement(std::uint32_t open) {
    if (peek().kind != Tok::Identifier) {
      fail("expected a statement name");
      return leaf(NodeKind::Empty, open);
    }
    const Token name = next();
    const std::string_view n = name.value;
    const std::size_t mark = scratch_.size();
    if (n == "if") return if_statement(open, mark);
    if (n == "for") {
      loop_targets();
      if (!is_name("in")) {
        fail("expected 'in'");
        return make(NodeKind::For, open, {}, mark);  // the targets, read
      }
      next();
      scratch_.push_back(expression(/*allow_select=*/false));
      if (is_name("if")) {  // for x in xs if cond: the iterable becomes `xs if cond`
        next();
        const std::size_t conditional = scratch_.size() - 1;
        scratch_.push_back(expression());
        scratch_.push_back(leaf(NodeKind::Empty, open));
        scratch_.push_back(make(NodeKind::Conditional, open, {}, conditional));
      }
      if (is_name("recursive")) {
        incompatible(peek().position, "a recursive for loop");
        next();
      }
      expect_close();
      block({"endfor", "else"}, open, "a for loop");
      if (at_statement({"else"})) {
        next();
        next();
        expect_close();
        block({"endfor"}, open, "a for loop");
      } else {
        scratch_.push_back(leaf(NodeKind::Block, open));
      }
      end_tag("endfor");
      return make(NodeKind::For, open, {}, mark);
    }
    if (n == "set") {
      set_targets();
      if (is_op("=")) {
        next();
        expression_list();
        expect_close();
      } else {
        if (is_op("|")) {  // {% set x | filter %}...{% endset %}
          const std::uint32_t target = scratch_.back();
          scratch_.pop_back();
          scratch_.push_back(postfix_filters(target));
        }
        expect_close();
        block({"endset"}, open, "a set block");
        end_tag("endset");
      }
      return make(NodeKind::Set, open, {}, mark);
    }
    if (n == "macro") {
      if (peek().kind != Tok::Identifier) {
        fail("expected the macro's name");
        return leaf(NodeKind::Empty, open);
      }
      const Token macro_name = next();
      const std::size_t params = scratch_.size();
      arguments();
      scratch_.push_back(make(NodeKind::Block, macro_name.position, {}, params));
      expect_close();
      block({"endmacro"}, open, "a macro");
      end_tag("endmacro");
      return make(NodeKind::Macro, open, macro_name.value, mark);
    }
    if (n == "call") {
      std::optional<std::uint32_t> params;
      if (is_op("(")) {  // the caller's parameters: kept as a third kid, after the body
        const std::size_t first = scratch_.size();
        arguments();
        params = make(NodeKind::Block, open, {}, first);
      }
      if (peek().kind != Tok::Identifier) {
        incompatible(peek().position, "a call statement whose callee is not a name");
      }
      scratch_.push_back(postfix(primary()));
      expect_close();
      block({"endcall"}, open, "a call block");
      end_tag("endcall");
      if (params) scratch_.push_back(*params);
      return make(NodeKind::CallBlock, open, {}, mark);
    }
    if (n == "filter") {
      if (peek().kind != Tok::Identifier) {
        fail("expected a filter name");
        return leaf(NodeKind::Empty, open);
      }
      const Token filter = next();
      const std::size_t args = scratch_.size();
      scratch_.push_back(leaf(NodeKind::Empty, filter.position));
      if (is_op("(")) arguments();
      std::uint32_t node = make(NodeKind::Filter, filter.position, filter.value, args);
      while (is_op("|")) node = postfix_filters(node);
      scratch_.push_back(node);
      expect_close();
      block({"endfilter"}, open, "a filter block");
      end_tag("endfilter");
      return make(NodeKind::FilterBlock, open, {}, mark);
    }
    if (n == "include" || n == "import" || n == "from" || n == "extends") {
      incompatible(name.position, "the {} statement", n);
      // Read to the tag's end; the expressions are kept for the checks.
      while (peek().kind != Tok::CloseStatement && peek().kind != Tok::End) {
        if (peek().kind == Tok::Identifier &&
            (peek().value == "import" || peek().value == "as" || peek().value == "ignore" ||
             peek().value == "missing" || peek().value == "with" || peek().value == "without" ||
             peek().value == "context")) {
          next();
          continue;
        }
        if (is_op(",")) {
          next();
          continue;
        }
        scratch_.push_back(expression());
      }
      expect_close();
      return make(NodeKind::Include, open, n, mark);
    }
    if (n == "break" || n == "continue" || n == "generation" || n == "endgeneration") {
      expect_close();
      return make(NodeKind::Other, open, n, mark);
    }
    if (n == "block" || n == "with" || n == "autoescape") {
      incompatible(name.position, "the {} statement", n);
      while (peek().kind != Tok::CloseStatement && peek().kind != Tok::End) {
        if (is_op(",") || is_op("=") || is_name("scoped") || is_name("required")) {
          next();
          continue;
        }
        scratch_.push_back(expression());
      }
      expect_close();
      const std::string_view end_view = n == "block"  ? "endblock"
                                        : n == "with" ? "endwith"
                                                      : "endautoescape";
      const std::string_view what = n == "block"  ? "a block block"
                                    : n == "with" ? "a with block"
                                                  : "a autoescape block";
      block({end_view}, open, what);
      end_tag(end_view);
      return make(NodeKind::Other, open, n, mark);
    }
    if (n == "do") {
      incompatible(name.position, "the do statement");
      scratch_.push_back(expression());
      expect_close();
      return make(NodeKind::Other, open, n, mark);
    }
    if (n == "raw") {
      expect_close();
      block({"endraw"}, open, "a raw block");
      end_tag("endraw");
      return make(NodeKind::Other, open, n, mark);
    }
    if (recording(true, true)) {
      fail_at(name.position, fmt::format("unknown statement '{}'", n.substr(0, 40)));
    } else {
      fail_at(name.position, {});
    }
    return leaf(NodeKind::Empty, open);
  }

  std::uint32_t if_statement(std::uint32_t open, std::size_t mark) {
    Deeper deeper(*this, open);
    scratch_.push_back(expression());
    expect_close();
    block({"elif", "else", "endif"}, open, "an if block");
    if (at_statement({"elif"})) {
      const std::uint32_t at = peek().position;
      next();
      next();
      const std::size_t else_mark = scratch_.size();
      scratch_.push_back(if_statement(at, scratch_.size()));
      scratch_.push_back(make(NodeKind::Block, at, {}, else_mark));
      return make(NodeKind::If, open, {}, mark);  // the inner if read the endif
    }
    if (at_statement({"else"})) {
      next();
      next();
      expect_close();
      block({"endif"}, open, "an if block");
    } else {
      scratch_.push_back(leaf(NodeKind::Block, open));
    }
    end_tag("endif");
    return make(NodeKind::If, open, {}, mark);
  }

  // A for loop's targets: names or parenthesised tuples, as both engines read them.
  void loop_targets() {
    const std::size_t begin = scratch_.size();
    const std::uint32_t at = peek().position;
    scratch_.push_back(primary());
    bool tuple = false;
    while (is_op(",")) {
      next();
      tuple = true;
      scratch_.push_back(primary());
    }
    if (tuple) scratch_.push_back(make(NodeKind::List, at, {}, begin));
  }

  // A set statement's targets: llama.cpp reads any expressions there; Jinja2 only names,
  // attributes (ns.x) and tuples of them.
  void set_targets() {
    const std::size_t begin = scratch_.size();
    expression_list();
    const Node& target = program_.nodes[scratch_.back()];
    const auto assignable = [&](const Node& n) {
      return n.kind == NodeKind::Identifier || n.kind == NodeKind::Member;
    };
    bool ok = assignable(target);
    if (target.kind == NodeKind::List) {
      ok = true;
      for (std::uint32_t k = 0; k < target.kid_count; ++k) {
        ok = ok && assignable(program_.node(program_.kid(target, k)));
      }
    }
    // {% set x | filter %}...{% endset %}: the filtered block form
    const bool block_filter = target.kind == NodeKind::Filter && peek().kind == Tok::CloseStatement;
    if (!ok && !block_filter) {
      jinja2_error(target.position, "a set statement assigns to something not a name");
    }
    (void)begin;
  }

  // expr (, expr)*: a tuple when there is a comma.
  void expression_list() {
    const std::size_t begin = scratch_.size();
    const std::uint32_t at = peek().position;
    scratch_.push_back(expression());
    bool tuple = false;
    while (is_op(",")) {
      next();
      tuple = true;
      scratch_.push_back(expression());
    }
    if (tuple) scratch_.push_back(make(NodeKind::List, at, {}, begin));
  }

  // --------------------------------------------------------------------- expressions ---
  std::uint32_t expression(bool allow_select = true) {
    Deeper deeper(*this, peek().position);
    const std::uint32_t at = peek().position;
    const std::uint32_t value = binary_or();
    if (allow_select && is_name("if")) {
      next();
      const std::size_t mark = scratch_.size();
      scratch_.push_back(value);
      scratch_.push_back(binary_or());
      if (is_name("else")) {
        next();
        scratch_.push_back(expression());
      } else {
        scratch_.push_back(leaf(NodeKind::Empty, at));
      }
      return make(NodeKind::Conditional, at, {}, mark);
    }
    return value;
  }

  std::uint32_t binary(std::uint32_t left, std::string_view op, std::uint32_t at,
                       std::uint32_t right) {
    const std::size_t mark = scratch_.size();
    scratch_.push_back(left);
    scratch_.push_back(right);
    return make(NodeKind::Binary, at, op, mark);
  }

  std::uint32_t binary_or() {
    std::uint32_t left = binary_and();
    while (is_name("or")) {
      const Token op = next();
      left = binary(left, op.value, op.position, binary_and());
    }
    return left;
  }
  std::uint32_t binary_and() {
    std::uint32_t left = negation();
    while (is_name("and")) {
      const Token op = next();
      left = binary(left, op.value, op.position, negation());
    }
    return left;
  }
  std::uint32_t negation() {
    if (is_name("not")) {
      Deeper deeper(*this, peek().position);
      const Token op = next();
      const std::size_t mark = scratch_.size();
      scratch_.push_back(negation());
      return make(NodeKind::Unary, op.position, op.value, mark);
    }
    return comparison();
  }
  std::uint32_t comparison() {
    std::uint32_t left = additive();
    while (true) {
      const Token& t = peek();
      if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        left = binary(left, "not in", t.position, additive());
      } else if (is_name("in")) {
        next();
        left = binary(left, "in", t.position, additive());
      } else if (t.kind == Tok::Operator &&
                 (t.value == "==" || t.value == "!=" || t.value == "<" || t.value == ">" ||
                  t.value == "<=" || t.value == ">=")) {
        const Token op = next();
        left = binary(left, op.value, op.position, additive());
      } else {
        return left;
      }
    }
  }
  std::uint32_t additive() {
    std::uint32_t left = multiplicative();
    while (is_op("+") || is_op("-") || is_op("~")) {
      const Token op = next();
      left = binary(left, op.value, op.position, multiplicative());
    }
    return left;
  }
  std::uint32_t multiplicative() {
    std::uint32_t left = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token op = next();
      left = binary(left, op.value, op.position, power());
    }
    return left;
  }
  std::uint32_t power() {
    std::uint32_t left = unary();
    while (is_op("**")) {
      const Token op = next();
      left = binary(left, op.value, op.position, unary());
    }
    return left;
  }
  std::uint32_t unary() {
    if (is_op("-") || is_op("+")) {
      Deeper deeper(*this, peek().position);
      const Token op = next();
      if (op.binary_sign) {
        incompatible(op.position,
                     "a sign '{}' after a name or value (llama.cpp reads it as a binary operator)",
                     op.value);
      }
      const std::size_t mark = scratch_.size();
      scratch_.push_back(unary());
      return make(NodeKind::Unary, op.position, op.value, mark);
    }
    return postfix(primary());
  }

  // .name, [index] and (args) as many as follow, then |filters, then `is` tests: the order both
  // engines read them in (x|f['a'] is an error in both).
  std::uint32_t postfix(std::uint32_t node, bool calls = true) {
    node = members(node, calls);
    if (!calls) return node;
    node = postfix_filters(node);
    while (is_name("is")) {
      next();
      if (is_name("not")) next();
      const Token test = peek();
      const std::size_t mark = scratch_.size();
      scratch_.push_back(node);
      if (test.kind == Tok::Identifier) {
        next();
      } else {
        // llama.cpp reads any value as the test (x is 00); Jinja2 a name only
        jinja2_error(test.position, "expected a test name after 'is'");
        scratch_.push_back(primary());
      }
      if (is_op("(")) {
        arguments();
      } else if (peek().kind == Tok::Number || peek().kind == Tok::String ||
                 (peek().kind == Tok::Identifier && !is_keyword(peek().value))) {
        // Jinja2's `x is divisibleby 3`; llama.cpp reads only name(args).
        incompatible(peek().position, "a test argument without parentheses");
        scratch_.push_back(members(primary(), false));
      }
      node = make(NodeKind::Test, test.position, test.value, mark);
    }
    return node;
  }

  std::uint32_t members(std::uint32_t node, bool calls) {
    while (true) {
      const Token& t = peek();
      if (is_op(".")) {
        next();
        const Token& name = peek();
        if (name.kind != Tok::Identifier && name.kind != Tok::Number) {
          fail("expected a name after '.'");
          return node;
        }
        next();
        const std::size_t mark = scratch_.size();
        scratch_.push_back(node);
        node = make(NodeKind::Member, name.position, name.value, mark);
      } else if (is_op("[")) {
        Deeper deeper(*this, t.position);
        next();
        const std::size_t mark = scratch_.size();
        scratch_.push_back(node);
        scratch_.push_back(subscript(t.position));
        expect_op("]");
        node = make(NodeKind::Subscript, t.position, {}, mark);
      } else if (calls && is_op("(")) {
        Deeper deeper(*this, t.position);
        const std::size_t mark = scratch_.size();
        scratch_.push_back(node);
        arguments();
        node = make(NodeKind::Call, t.position, {}, mark);
      } else {
        return node;
      }
    }
  }

  std::uint32_t postfix_filters(std::uint32_t operand) {
    while (is_op("|")) {
      next();
      if (peek().kind != Tok::Identifier) {
        // llama.cpp reads any value as the filter (x | 'OBJECT'); Jinja2 a name only
        jinja2_error(peek().position, "expected a filter name after '|'");
        const std::size_t mark = scratch_.size();
        scratch_.push_back(operand);
        scratch_.push_back(primary());
        if (is_op("(")) arguments();
        operand = make(NodeKind::Filter, program_.nodes[scratch_[mark + 1]].position, {}, mark);
        continue;
      }
      const Token name = next();
      std::string_view filter = name.value;
      // Jinja2 allows dotted filter names (filters registered as a.b).
      while (is_op(".") && peek(1).kind == Tok::Identifier) {
        next();
        next();
        incompatible(name.position, "a dotted filter name");
      }
      const std::size_t mark = scratch_.size();
      scratch_.push_back(operand);
      const bool called = is_op("(");
      if (called) arguments();
      operand = make(NodeKind::Filter, name.position, filter, mark);
      // llama.cpp reads x|f(a).b and x|f(a)[b] on (Jinja2 does not)
      if (called && (is_op(".") || is_op("["))) {
        jinja2_error(peek().position, "an attribute or item after a filter's arguments");
        operand = members(operand, true);
      }
    }
    return operand;
  }

  static bool is_keyword(std::string_view word) {
    return word == "and" || word == "or" || word == "not" || word == "in" || word == "is" ||
           word == "if" || word == "else";
  }

  // [a], [a:b], [a:b:c], [:], []
  std::uint32_t subscript(std::uint32_t at) {
    const std::size_t mark = scratch_.size();
    std::size_t parts = 0;
    bool slice = false;
    while (!is_op("]")) {
      if (peek().kind == Tok::End || peek().kind == Tok::CloseExpression ||
          peek().kind == Tok::CloseStatement) {
        fail("expected ']'");
        break;
      }
      if (is_op(":")) {
        next();
        slice = true;
        if (scratch_.size() - mark == parts) scratch_.push_back(leaf(NodeKind::Empty, at));
        ++parts;
        continue;
      }
      if (scratch_.size() - mark > parts) {
        // a[b c]: llama.cpp keeps the first and reads on; Jinja2 refuses it
        jinja2_error(peek().position, "expected ':' or ']'");
        loose_.push_back(expression());  // still read by the checks
        continue;
      }
      scratch_.push_back(expression());
      if (is_op(",")) {  // a[1, 2]: a tuple index
        const std::size_t tuple = scratch_.size() - 1;
        while (is_op(",")) {
          next();
          if (is_op("]")) break;
          scratch_.push_back(expression());
        }
        scratch_.push_back(make(NodeKind::List, at, {}, tuple));
      }
    }
    if (!slice) {
      if (scratch_.size() == mark) return leaf(NodeKind::Empty, at);
      const std::uint32_t index = scratch_.back();
      scratch_.pop_back();
      return index;
    }
    while (scratch_.size() - mark < 3) scratch_.push_back(leaf(NodeKind::Empty, at));
    return make(NodeKind::Slice, at, {}, mark);
  }

  // Items up to `close`, each read by `item`, with commas between them: llama.cpp reads on
  // where one is missing, Jinja2 does not.
  template <typename Item>
  void delimited(std::string_view close, Item item) {
    while (!is_op(close)) {
      const Tok kind = peek().kind;
      if (kind == Tok::End || kind == Tok::CloseExpression || kind == Tok::CloseStatement) {
        fail("expected '{}'", close);
        return;
      }
      item();
      if (is_op(",")) {
        next();
      } else if (!is_op(close)) {
        jinja2_error(peek().position, "expected ',' or '{}'", close);
      }
    }
    next();
  }

  // ( args ): expressions, name=value, *args, **kwargs; pushed on the scratch stack.
  void arguments() {
    expect_op("(");
    delimited(")", [&] {
      const Token& t = peek();
      if (is_op("*") || is_op("**")) {
        if (is_op("**")) incompatible(t.position, "a ** argument");
        next();
        const std::size_t mark = scratch_.size();
        scratch_.push_back(expression());
        scratch_.push_back(make(NodeKind::Spread, t.position, {}, mark));
      } else if (t.kind == Tok::Identifier && is_op("=", 1)) {
        next();
        next();
        const std::size_t mark = scratch_.size();
        scratch_.push_back(expression());
        scratch_.push_back(make(NodeKind::Keyword, t.position, t.value, mark));
      } else {
        const std::uint32_t value = expression();
        if (is_op("=")) {
          // llama.cpp takes any expression before '=' as a keyword's name; Jinja2 a name only
          jinja2_error(peek().position, "a keyword argument whose name is not a name");
          next();
          loose_.push_back(value);
          const std::size_t mark = scratch_.size();
          scratch_.push_back(expression());
          scratch_.push_back(make(NodeKind::Keyword, t.position, {}, mark));
        } else {
          scratch_.push_back(value);
        }
      }
    });
  }

  std::uint32_t primary() {
    const Token t = peek();
    switch (t.kind) {
      case Tok::Identifier: next(); return leaf(NodeKind::Identifier, t.position, t.value);
      case Tok::Number: next(); return leaf(NodeKind::Number, t.position, t.value);
      case Tok::String: {
        next();
        if (peek().kind != Tok::String) return leaf(NodeKind::String, t.position, t.value);
        // Adjacent literals are one string.
        std::string joined(t.value);
        while (peek().kind == Tok::String) joined += next().value;
        program_.strings.push_back(std::move(joined));
        return leaf(NodeKind::String, t.position, program_.strings.back());
      }
      case Tok::Operator: {
        Deeper deeper(*this, t.position);
        if (t.value == "(") {
          next();
          const std::size_t mark = scratch_.size();
          if (is_op(")")) {  // ()
            incompatible(t.position, "an empty tuple () (llama.cpp reads no value in it)");
            next();
            return make(NodeKind::List, t.position, {}, mark);
          }
          scratch_.push_back(expression());
          bool tuple = false;
          while (is_op(",")) {
            next();
            tuple = true;
            if (is_op(")")) break;
            scratch_.push_back(expression());
          }
          expect_op(")");
          if (!tuple) {
            const std::uint32_t inner = scratch_.back();
            scratch_.pop_back();
            return inner;
          }
          return make(NodeKind::List, t.position, {}, mark);
        }
        if (t.value == "[") {
          next();
          const std::size_t mark = scratch_.size();
          delimited("]", [&] { scratch_.push_back(expression()); });
          return make(NodeKind::List, t.position, {}, mark);
        }
        if (t.value == "{") {
          next();
          const std::size_t mark = scratch_.size();
          delimited("}", [&] {
            scratch_.push_back(expression());
            expect_op(":");
            scratch_.push_back(expression());
          });
          return make(NodeKind::Dict, t.position, {}, mark);
        }
        break;
      }
      default: break;
    }
    fail("expected a value");
    return leaf(NodeKind::Empty, t.position);
  }

  std::vector<Token> tokens_;
  Program& program_;
  Work* work_;
  Halt halt_ = Halt::None;
  std::size_t current_ = 0;
  std::size_t skip_floor_ = 0;  // skip_tag() stops at a new tag only past this token
  std::uint32_t depth_ = 0;
  std::vector<std::uint32_t> scratch_;
  std::vector<std::uint32_t> loose_;  // expressions read but in no node (a[b c]'s c)
};

}  // namespace

Program parse(std::string_view source, Work* work) {
  Program program;
  std::vector<Token> tokens = Lexer(source, program, work).run();
  Parser(std::move(tokens), program, work).run();
  return program;
}

LineColumn line_column(std::string_view source, std::uint32_t position) {
  const std::string_view before = source.substr(0, position);
  LineColumn at;
  at.line = 1 + static_cast<std::uint32_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n');
  at.column = static_cast<std::uint32_t>(
      position - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1);
  return at;
}

}  // namespace ggufcheck::detail::jinja
