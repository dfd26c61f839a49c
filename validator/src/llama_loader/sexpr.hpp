// The S-expressions the table generator writes llama.cpp's model loading code as
// (validator/tools/llama_tables/cxx.py documents the forms). Parsed once per function, on first
// use; the text is the project's own generated table, never file input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck::detail::sexpr {

// The heads of the forms the interpreter runs, known when the tree is parsed, so that running it
// dispatches on a number instead of comparing strings (a run evaluates tens of thousands of nodes).
enum class Head : std::uint8_t {
  Other,  // not a list, an empty list, or a head the interpreter does not dispatch on
  N,
  F,
  S,
  Id,
  Mem,
  Idx,
  Un,
  Bin,
  Tern,
  Assign,
  Call,
  List,
  Block,
  Expr,
  Decl,
  If,
  For,
  Foreach,
  Switch,
  Case,
  Default,
  Break,
  Continue,
  Try,
  Lambda,
  Return,
  Throw,
  Assert,
  Unread,
  Skip,
};
[[nodiscard]] Head head_of(std::string_view symbol);

struct Node {
  enum class Kind : std::uint8_t { List, Symbol, String, Integer, Real };
  Kind kind = Kind::List;
  Head op = Head::Other;       // List: its head's form
  std::string text;            // Symbol, String
  std::int64_t integer = 0;    // Integer
  double real = 0;             // Real
  std::vector<Node> children;  // List

  [[nodiscard]] bool is(Head form) const { return op == form; }
  [[nodiscard]] bool is(std::string_view head) const {
    return kind == Kind::List && !children.empty() && children[0].kind == Kind::Symbol &&
           children[0].text == head;
  }
  [[nodiscard]] std::string_view head() const {
    return kind == Kind::List && !children.empty() ? std::string_view(children[0].text)
                                                   : std::string_view();
  }
  [[nodiscard]] const Node& operator[](std::size_t i) const { return children[i]; }
  [[nodiscard]] std::size_t size() const { return children.size(); }
};

// Throws std::runtime_error on text the generator cannot have written.
[[nodiscard]] Node parse(std::string_view text);

}  // namespace ggufcheck::detail::sexpr
