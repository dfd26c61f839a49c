#include "llama_loader/sexpr.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace ggufcheck::detail::sexpr {
namespace {

class SexprParser {
 public:
  explicit SexprParser(std::string_view text) : text_(text) {}

  Node node() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Node list;
      while (true) {
        skip_space();
        if (pos_ >= text_.size()) fail("unclosed list");
        if (text_[pos_] == ')') {
          ++pos_;
          if (!list.children.empty() && list.children[0].kind == Node::Kind::Symbol) {
            list.op = head_of(list.children[0].text);
          }
          return list;
        }
        list.children.push_back(node());
      }
    }
    if (c == '"') return string();
    return atom();
  }

  void end() {
    skip_space();
    if (pos_ != text_.size()) fail("text after the expression");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(std::string("llama.cpp table: ") + what + " at " +
                             std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  Node string() {
    Node out;
    out.kind = Node::Kind::String;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out.text += text_[pos_++];
    }
    if (pos_ >= text_.size()) fail("unclosed string");
    ++pos_;
    return out;
  }
  Node atom() {
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '(' && text_[pos_] != ')' &&
           text_[pos_] != '\n') {
      ++pos_;
    }
    Node out;
    out.text = std::string(text_.substr(begin, pos_ - begin));
    const char first = out.text.empty() ? '\0' : out.text[0];
    const bool numeric = (first >= '0' && first <= '9') || (first == '-' && out.text.size() > 1);
    if (!numeric) {
      out.kind = Node::Kind::Symbol;
      return out;
    }
    const char* b = out.text.data();
    const char* e = b + out.text.size();
    if (auto [p, ec] = std::from_chars(b, e, out.integer); ec == std::errc() && p == e) {
      out.kind = Node::Kind::Integer;
      return out;
    }
    // Reals: the generator writes Python's repr of a float (strtod reads every form of it).
    char* stop = nullptr;
    out.real = std::strtod(out.text.c_str(), &stop);
    if (stop != out.text.c_str() + out.text.size()) fail("bad number");
    out.kind = Node::Kind::Real;
    return out;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

Head head_of(std::string_view symbol) {
  static constexpr std::pair<std::string_view, Head> kHeads[] = {
      {"n", Head::N},
      {"f", Head::F},
      {"s", Head::S},
      {"id", Head::Id},
      {"mem", Head::Mem},
      {"idx", Head::Idx},
      {"un", Head::Un},
      {"bin", Head::Bin},
      {"tern", Head::Tern},
      {"assign", Head::Assign},
      {"call", Head::Call},
      {"list", Head::List},
      {"block", Head::Block},
      {"expr", Head::Expr},
      {"decl", Head::Decl},
      {"if", Head::If},
      {"for", Head::For},
      {"foreach", Head::Foreach},
      {"switch", Head::Switch},
      {"case", Head::Case},
      {"default", Head::Default},
      {"break", Head::Break},
      {"continue", Head::Continue},
      {"try", Head::Try},
      {"lambda", Head::Lambda},
      {"return", Head::Return},
      {"throw", Head::Throw},
      {"assert", Head::Assert},
      {"unread", Head::Unread},
      {"skip", Head::Skip},
  };
  for (const auto& [name, head] : kHeads) {
    if (name == symbol) return head;
  }
  return Head::Other;
}

Node parse(std::string_view text) {
  SexprParser reader(text);
  Node node = reader.node();
  reader.end();
  return node;
}

}  // namespace ggufcheck::detail::sexpr
