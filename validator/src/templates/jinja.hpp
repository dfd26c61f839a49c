// ggufcheck's own reader of Jinja chat templates: a lexer and a parser for the language that
// chat templates use (the pinned llama.cpp's engine, common/jinja/, and the Jinja2 forms other
// servers render), into a flat syntax tree the template checks walk.
//
// It reads more than llama.cpp's engine parses, and records where that engine would stop
// (`incompatibility`): a template that Jinja2 renders but llama.cpp cannot parse still has its
// every expression checked, since a server rendering it with Jinja2 runs them. A real syntax
// error is recorded too, and the reader resumes at the next tag, so a payload behind a broken tag
// is still read. Cost: linear in the template's bytes, counted in work units (Work): a syntax
// error costs the units of the tokens it gave up, never an exception, and only the first of each
// kind of problem is formatted; nesting is limited (kMaxNesting), so the recursion of the parser
// is bounded whatever the input.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck::detail::jinja {

inline constexpr std::uint32_t kMaxNesting = 256;

// Work units: what the template stage does, counted so that one budget bounds it. The reader
// spends one per token the lexer makes, one per token the parser reads and one per node it makes;
// the checks (template_checks.cpp) one per node and per step of their walks and one per
// kBytesPerUnit bytes a text search reads. Once the total passes the limit it stays exhausted:
// the reader stops (Program::stopped) and so do the checks. One Work spans the templates of a
// file.
class Work {
 public:
  static constexpr std::uint64_t kBytesPerUnit = 16;

  Work() = default;
  explicit Work(std::uint64_t limit) : limit_(limit) {}

  // Counts `units`; false once the total is past the limit.
  bool spend(std::uint64_t units = 1) {
    used_ = units > std::numeric_limits<std::uint64_t>::max() - used_
                ? std::numeric_limits<std::uint64_t>::max()
                : used_ + units;
    return used_ <= limit_;
  }
  // What reading `bytes` bytes costs: one unit per kBytesPerUnit, at least one.
  bool spend_bytes(std::uint64_t bytes) { return spend(bytes / kBytesPerUnit + 1); }
  [[nodiscard]] bool exhausted() const { return used_ > limit_; }
  [[nodiscard]] std::uint64_t used() const { return used_; }
  [[nodiscard]] std::uint64_t limit() const { return limit_; }

 private:
  std::uint64_t used_ = 0;
  std::uint64_t limit_ = std::numeric_limits<std::uint64_t>::max();
};

enum class NodeKind : std::uint8_t {
  // Statements and template structure
  Text,         // value: the text (kids: none)
  Output,       // {{ expr }}: kids[0]
  If,           // kids: test, Block(body), Block(else) (elif: an If inside else)
  For,          // kids: target, iterable, Block(body), Block(else)
  Set,          // kids: target, value or Block(body)
  Macro,        // value: name; kids: Block(parameters), Block(body)
  CallBlock,    // {% call(params) name(args) %}: kids: call, Block(body)[, Block(params)]
  FilterBlock,  // {% filter f %}: kids: filter, Block(body)
  Include,      // include / import / from / extends: value: the keyword; kids: expressions
  Other,        // another statement (break, continue, generation, with, raw, ...): value
  Block,        // a list of statements or expressions
  // Expressions
  Identifier,   // value: the name
  String,       // value: the decoded literal
  Number,       // value: the digits
  Member,       // object.name: kids[0] object, value: the name
  Subscript,    // object[index]: kids: object, index (Slice for [a:b:c])
  Slice,        // kids: start, stop, step (Empty where left out)
  Call,         // kids: callee, then arguments
  Keyword,      // name=value argument: value: the name; kids[0] the value
  Filter,       // operand|name or operand|name(args): value: the name; kids: operand, args
  Test,         // operand is [not] name(args): value: the name; kids: operand, args
  Binary,       // value: the operator (+ - ~ * / // % ** == != < > <= >= in "not in" and or)
  Unary,        // value: not, -, +; kids[0]
  Conditional,  // a if b else c: kids: a, b, c (c Empty without else)
  List,         // [a, b] and tuples: kids
  Dict,         // {k: v}: kids: k1, v1, k2, v2, ...
  Spread,       // *args: kids[0]
  Empty,        // an omitted part
};

struct Node {
  NodeKind kind = NodeKind::Empty;
  std::uint32_t position = 0;   // byte offset in the template
  std::uint32_t first_kid = 0;  // into Program::kids
  std::uint32_t kid_count = 0;
  std::string_view value;  // into the template, or into Program's decoded strings
};

// Where llama.cpp's engine would stop, or where the template is not Jinja at all.
struct Problem {
  std::uint32_t position = 0;
  std::string message;
};

struct Program {
  std::vector<Node> nodes;
  std::vector<std::uint32_t> kids;
  std::uint32_t root = 0;  // a Block
  // The first place llama.cpp's engine (lexer or parser) would refuse the template, if any.
  std::optional<Problem> incompatibility;
  // The first place that is no Jinja at all (the reader resumed after it), if any.
  std::optional<Problem> syntax_error;
  // Nesting beyond kMaxNesting: where it happened (the deeper part was skipped).
  std::optional<std::uint32_t> too_deep;
  // The work budget ran out while reading: the program holds what was read before it.
  bool stopped = false;
  std::deque<std::string> strings;  // decoded string literals (a deque: views into them stay valid)

  [[nodiscard]] const Node& node(std::uint32_t index) const { return nodes[index]; }
  [[nodiscard]] std::uint32_t kid(const Node& n, std::uint32_t i) const {
    return kids[n.first_kid + i];
  }
};

// Reads a template of at most 2^32 - 1 bytes (the caller limits the size). The program's string
// views point into `source`, which must outlive it. `work`, when given, counts what the reading
// costs, and the reading stops where it is exhausted (Program::stopped).
Program parse(std::string_view source, Work* work = nullptr);

// 1-based line and column (in bytes) of a byte offset.
struct LineColumn {
  std::uint32_t line = 1;
  std::uint32_t column = 1;
};
LineColumn line_column(std::string_view source, std::uint32_t position);

}  // namespace ggufcheck::detail::jinja
