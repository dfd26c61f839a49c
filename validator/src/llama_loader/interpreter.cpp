#include "llama_loader/interpreter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "index/keys.hpp"
#include "index/values.hpp"
#include "llama_loader/sexpr.hpp"
#include "util/duplicates.hpp"

namespace ggufcheck::detail {
namespace {

using sexpr::Head;
using sexpr::Node;

// --- the generated tables -------------------------------------------------------------------

struct ArchRow {
  std::string_view enum_name;
  std::string_view name;
  int id;
};
struct NameRow {
  std::string_view enum_name;
  std::string_view format;
};
struct TensorRow {
  std::string_view enum_name;
  std::string_view format;
  bool unused;
};
struct ConstantRow {
  std::string_view name;
  std::int64_t value;
};
struct HparamRow {
  std::string_view name;
  std::string_view type;
  int elements;
  std::string_view initial;
};
struct FunctionRow {
  std::string_view name;
  std::string_view params;
  std::string_view where;
  std::string_view body;
};

#define GGUFCHECK_LLAMA_NONE(...)
#define GGUFCHECK_LLAMA_ARCH GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_KEY GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_TENSOR GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_CONSTANT GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_ROPE_SCALING GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_HPARAM GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_FUNCTION GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_UNREAD GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_VERSION GGUFCHECK_LLAMA_NONE
#define GGUFCHECK_LLAMA_MODELLED GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_ARCH
#define GGUFCHECK_LLAMA_ARCH(e, n, id) {e, n, id},
constexpr ArchRow kArchs[] = {
#include "llama_loader/generated/llama_arch.inc"
};
#undef GGUFCHECK_LLAMA_ARCH
#define GGUFCHECK_LLAMA_ARCH GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_KEY
#define GGUFCHECK_LLAMA_KEY(e, f) {e, f},
constexpr NameRow kKeys[] = {
#include "llama_loader/generated/llama_arch.inc"
};
#undef GGUFCHECK_LLAMA_KEY
#define GGUFCHECK_LLAMA_KEY GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_TENSOR
#define GGUFCHECK_LLAMA_TENSOR(e, f, u) {e, f, u},
constexpr TensorRow kTensors[] = {
#include "llama_loader/generated/llama_arch.inc"
};
#undef GGUFCHECK_LLAMA_TENSOR
#define GGUFCHECK_LLAMA_TENSOR GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_CONSTANT
#define GGUFCHECK_LLAMA_CONSTANT(n, v) {n, v},
constexpr ConstantRow kConstants[] = {
#include "llama_loader/generated/llama_arch.inc"
};
#undef GGUFCHECK_LLAMA_CONSTANT
#define GGUFCHECK_LLAMA_CONSTANT GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_ROPE_SCALING
#define GGUFCHECK_LLAMA_ROPE_SCALING(text, e) {e, text},
constexpr NameRow kRopeScaling[] = {
#include "llama_loader/generated/llama_arch.inc"
};
#undef GGUFCHECK_LLAMA_ROPE_SCALING
#define GGUFCHECK_LLAMA_ROPE_SCALING GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_HPARAM
#define GGUFCHECK_LLAMA_HPARAM(n, t, c, d) {n, t, c, d},
constexpr HparamRow kHparams[] = {
#include "llama_loader/generated/llama_arch.inc"
};
#undef GGUFCHECK_LLAMA_HPARAM
#define GGUFCHECK_LLAMA_HPARAM GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_FUNCTION
// The bodies are long literals: their length from sizeof, not a constexpr strlen (clang stops
// counting at its constexpr step limit).
#define GGUFCHECK_LLAMA_FUNCTION(n, p, w, b) {n, p, w, std::string_view(b, sizeof(b) - 1)},
constexpr FunctionRow kFunctions[] = {
#include "llama_loader/generated/llama_arch.inc"
};
#undef GGUFCHECK_LLAMA_FUNCTION
#define GGUFCHECK_LLAMA_FUNCTION GGUFCHECK_LLAMA_NONE

#undef GGUFCHECK_LLAMA_VERSION
#define GGUFCHECK_LLAMA_VERSION(v) v,
constexpr std::string_view kVersion[] = {
#include "llama_loader/generated/llama_arch.inc"
};

// A named constant of the loading code (TENSOR_NOT_REQUIRED, LLAMA_ROPE_SCALING_TYPE_YARN, ...).
std::optional<std::int64_t> find_constant(std::string_view name) {
  for (const ConstantRow& c : kConstants) {
    if (c.name == name) return c.value;
  }
  return std::nullopt;
}

template <typename Row, std::size_t N>
const Row* find_row(const Row (&rows)[N], std::string_view enum_name) {
  for (const Row& row : rows) {
    if (row.enum_name == enum_name) return &row;
  }
  return nullptr;
}

struct ParsedFunction {
  const FunctionRow* row = nullptr;
  std::vector<std::string> params;
  Node body;
};

// Each function's tree, parsed on first use and kept: the table is the program's own.
const ParsedFunction* function(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<ParsedFunction>, std::less<>> parsed;
  const std::lock_guard lock(mutex);
  if (const auto it = parsed.find(name); it != parsed.end()) return it->second.get();
  const FunctionRow* row = nullptr;
  for (const FunctionRow& f : kFunctions) {
    if (f.name == name) row = &f;
  }
  std::unique_ptr<ParsedFunction> out;
  if (row != nullptr) {
    out = std::make_unique<ParsedFunction>();
    out->row = row;
    out->body = sexpr::parse(row->body);
    std::string_view params = row->params;
    while (!params.empty()) {
      const std::size_t comma = params.find(',');
      out->params.emplace_back(params.substr(0, comma));
      params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
    }
  }
  return parsed.emplace(std::string(name), std::move(out)).first->second.get();
}

// The C++ an expression of the table came from, for messages: GGML_ASSERT(n_expert <= 1024).
std::string source_text(const Node& n) {
  const Head head = n.op;
  if (head == Head::N) return std::to_string(n[1].integer);
  if (head == Head::F)
    return n[1].kind == Node::Kind::Real ? fmt::format("{}", n[1].real) : n[1].text;
  if (head == Head::S) return "\"" + n[1].text + "\"";
  if (head == Head::Id) return n[1].text;
  if (head == Head::Mem) return source_text(n[1]) + "." + n[2].text;
  if (head == Head::Idx) return source_text(n[1]) + "[" + source_text(n[2]) + "]";
  if (head == Head::Un) return n[1].text + source_text(n[2]);
  if (head == Head::Bin) return source_text(n[2]) + " " + n[1].text + " " + source_text(n[3]);
  if (head == Head::Tern) {
    return source_text(n[1]) + " ? " + source_text(n[2]) + " : " + source_text(n[3]);
  }
  if (head == Head::Call) {
    std::string out = source_text(n[1]) + "(";
    for (std::size_t i = 2; i < n.size(); ++i) out += (i > 2 ? ", " : "") + source_text(n[i]);
    return out + ")";
  }
  return "...";
}

// --- values ---------------------------------------------------------------------------------

struct Value;
using Array = std::vector<Value>;

struct Value {
  enum class Kind : std::uint8_t { Unknown, Int, Real, Text, List, Lambda };
  Kind kind = Kind::Unknown;
  std::int64_t i = 0;
  double r = 0;
  std::string s;
  std::shared_ptr<Array> list;
  // An Int that is a tensor pointer: i is 1 + the tensor's index (0 is a null pointer).
  bool tensor = false;
  // A Lambda: its (lambda name "params" body line) node in the table.
  const Node* lambda = nullptr;

  static Value integer(std::int64_t v) {
    Value out;
    out.kind = Kind::Int;
    out.i = v;
    return out;
  }
  static Value real(double v) {
    Value out;
    out.kind = Kind::Real;
    out.r = v;
    return out;
  }
  static Value text(std::string v) {
    Value out;
    out.kind = Kind::Text;
    out.s = std::move(v);
    return out;
  }
  static Value tensor_at(std::size_t index) {
    Value out = integer(static_cast<std::int64_t>(index) + 1);
    out.tensor = true;
    return out;
  }
  static Value empty_list() {
    Value out;
    out.kind = Kind::List;
    out.list = std::make_shared<Array>();
    return out;
  }
  [[nodiscard]] bool known() const { return kind != Kind::Unknown; }
  [[nodiscard]] bool numeric() const { return kind == Kind::Int || kind == Kind::Real; }
  [[nodiscard]] double as_real() const { return kind == Kind::Int ? static_cast<double>(i) : r; }
  [[nodiscard]] bool truthy() const {
    if (kind == Kind::Int) return i != 0;
    if (kind == Kind::Real) return r != 0;
    return true;  // a string or an array object
  }
};

// A C++ declared type: what a value stored in it becomes.
Value convert(const Value& v, std::string_view type) {
  if (!v.known()) return v;
  if (type == "bool") return Value::integer(v.truthy() ? 1 : 0);
  if (type == "float" || type == "double") return v.numeric() ? Value::real(v.as_real()) : Value{};
  if (type == "uint32_t" || type == "llama_token" || type.starts_with("llama_") || type == "int" ||
      type == "int32_t" || type == "int64_t" || type == "uint64_t" || type == "size_t") {
    if (!v.numeric()) return Value{};
    const std::int64_t whole =
        v.kind == Value::Kind::Int ? v.i : static_cast<std::int64_t>(v.r);  // truncation, as C++
    if (type == "uint32_t") return Value::integer(static_cast<std::uint32_t>(whole));
    if (type == "int" || type == "int32_t" || type == "llama_token")
      return Value::integer(static_cast<std::int32_t>(whole));
    return Value::integer(whole);
  }
  return v;
}

// Whether a and b are the same field for field (assigning one to the other changes nothing).
bool same_value(const Value& a, const Value& b) {
  return a.kind == b.kind && a.i == b.i &&
         std::bit_cast<std::uint64_t>(a.r) == std::bit_cast<std::uint64_t>(b.r) && a.s == b.s &&
         a.list == b.list && a.tensor == b.tensor && a.lambda == b.lambda;
}

// The GGUF type llama.cpp's get_key<T> demands of a key read into a T (GKV_Base,
// src/llama-model-loader.cpp); the pooling type is read as a u32.
std::optional<ValueType> gguf_type_of(std::string_view type) {
  if (type == "bool") return ValueType::Bool;
  if (type == "uint8_t") return ValueType::Uint8;
  if (type == "uint16_t") return ValueType::Uint16;
  if (type == "uint32_t" || type == "llama_pooling_type") return ValueType::Uint32;
  if (type == "uint64_t") return ValueType::Uint64;
  if (type == "int8_t") return ValueType::Int8;
  if (type == "int16_t") return ValueType::Int16;
  if (type == "int32_t" || type == "int" || type == "llama_token") return ValueType::Int32;
  if (type == "int64_t") return ValueType::Int64;
  if (type == "float") return ValueType::Float32;
  if (type == "double") return ValueType::Float64;
  if (type == "std::string") return ValueType::String;
  return std::nullopt;
}

// --- the run --------------------------------------------------------------------------------

struct Stop {};  // llama.cpp stopped loading (a refusal was recorded) or the code was lost

// How a statement ends. Return, break and continue are results, not exceptions: the tables
// return from most functions they run, and an exception per return cost the fuzz targets a
// fifth of their time under ASan.
enum class Flow : std::uint8_t {
  Next,      // on to the next statement
  Return,    // out of the function (its value is in Loader::returned_)
  Break,     // out of the loop or switch
  Continue,  // to the loop's next round
};

struct Variable {
  Value value;
  std::string type;
};

class Loader {
 public:
  Loader(const FileIndex& file_index, std::string_view architecture,
         std::span<const TensorRef> tensors, LoaderVerdict& verdict)
      : file_index_(file_index), arch_(architecture), tensors_(tensors), verdict_(verdict) {
    // Only the keys the loading code can ask for are kept (a few hundred names), never one entry
    // per key of the file, which may hold millions.
    const std::unordered_set<std::string>& wanted = arch_keys(architecture).wanted;
    for (std::size_t i = 0; i < file_index.metadata.size(); ++i) {
      const std::string_view key = c_string_prefix(file_index.key(i));
      if (const auto it = wanted.find(std::string(key)); it != wanted.end()) {
        keys_.emplace(*it, i);  // first wins: llama.cpp finds the first
      }
    }
    for (const ArchRow& row : kArchs) {
      if (row.name == architecture) arch_id_ = row.id;
    }
  }

  void load_hparams() {
    call_function("model_tensor_members", {}, nullptr);  // null and empty until loaded
    call_function("load_hparams", {}, nullptr);
  }

  // What llama_model_create runs for the architecture before loading: nothing but a refusal for
  // an architecture without a model class (the table's "<arch>:create").
  void create() {
    if (function(arch_ + ":create") != nullptr) call_function(arch_ + ":create", {}, nullptr);
  }

  void load_tensors() {
    // The tensors by name: a seeded hash (a file cannot choose names that collide) and the index,
    // 16 bytes a tensor, sorted.
    names_.reserve(tensors_.size());
    for (std::size_t t = 0; t < tensors_.size(); ++t) {
      names_.emplace_back(seeded_hash(tensor_name(t)), t);
    }
    std::sort(names_.begin(), names_.end());
    consumed_.assign(tensors_.size(), false);
    // The block of llama_model_base::load_tensors that creates the tensors (the table's
    // "load_tensors"): it reads the local n_layer_all and calls load_arch_tensors.
    scopes_.emplace_back();
    const Variable* n_layer_all = hparam("n_layer_all");
    scopes_.back()["n_layer_all"] = Variable{n_layer_all ? n_layer_all->value : Value{}, "int"};
    call_function("load_tensors", {}, nullptr);
    scopes_.pop_back();
    // llama.cpp counts the tensors it created against the file's (done_getting_tensors).
    for (std::size_t t = 0; t < tensors_.size(); ++t) {
      if (consumed_[t]) continue;
      const TensorRef& ref = tensors_[t];
      const std::string_view name = ref.file->name(ref.index);
      add_tensor_finding(Code::UnexpectedTensor, ref,
                         fmt::format("tensor \"{}\" is not one llama.cpp's {} loader uses: it "
                                     "refuses the file (wrong number of tensors)",
                                     escape(name), arch_),
                         "remove it, or check the architecture and the block count");
    }
  }

 private:
  // --- findings -----------------------------------------------------------------------------
  [[noreturn]] void refuse(Code code, std::optional<std::size_t> kv, std::string message,
                           std::string hint = {}) {
    LoaderFinding f;
    f.code = code;
    if (kv) {
      f.offset = file_index_.metadata[*kv].key_offset();
      f.length = file_index_.pair_end(*kv) - f.offset;
      f.field = Field::kv(*kv, file_index_.key(*kv)).text();
    } else {
      f.field = "metadata";
      f.offset = file_index_.metadata.size() > 0 ? file_index_.metadata[0].key_offset() : 0;
    }
    f.message = std::move(message);
    f.hint = std::move(hint);
    verdict_.findings.push_back(std::move(f));
    throw Stop{};
  }
  void add_tensor_finding(Code code, const TensorRef& ref, std::string message, std::string hint) {
    LoaderFinding f;
    f.code = code;
    f.shard = ref.shard;
    f.offset = ref.file->tensors[ref.index].name_offset;
    f.length = ref.file->info_end(ref.index) - f.offset;
    f.field = Field::tensor(ref.index, ref.file->name(ref.index)).text();
    f.message = std::move(message);
    f.hint = std::move(hint);
    verdict_.findings.push_back(std::move(f));
  }
  [[noreturn]] void lost_at_line(std::int64_t line) {
    const std::string_view where = current_ != nullptr ? current_->row->where : "";
    if (!verdict_.lost_at) {
      verdict_.lost_at = fmt::format("{}:{}", where.substr(0, where.find(':')), line);
    }
    throw Stop{};
  }
  [[noreturn]] void lost(const Node& where) {
    if (!verdict_.lost_at) verdict_.lost_at = location(where);
    throw Stop{};
  }
  std::string location(const Node& n) const {
    const std::int64_t line = n.size() > 0 && n.children.back().kind == Node::Kind::Integer
                                  ? n.children.back().integer
                                  : 0;
    const std::string_view where = current_ != nullptr ? current_->row->where : "";
    const std::string_view file = where.substr(0, where.find(':'));
    return line > 0 ? fmt::format("{}:{}", file, line) : std::string(where);
  }

  // The field of hparams named `name` (nullptr for none), made from its initial value on first
  // use: a run reads some of the 177 fields, and making them all for every run (19 arrays of 512
  // values among them, the initial values looked up in the constants) cost more than the rest of
  // the run. The initial values are made once per process; each run gets arrays of its own.
  Variable* hparam(std::string_view name) {
    if (const auto it = hparams_.find(name); it != hparams_.end()) return &it->second;
    const auto made = initial_hparams().find(name);
    if (made == initial_hparams().end()) return nullptr;
    Variable& field = hparams_.emplace(made->first, made->second).first->second;
    if (field.value.kind == Value::Kind::List) {
      field.value.list = std::make_shared<Array>(*made->second.value.list);
    }
    return &field;
  }
  static const std::map<std::string, Variable, std::less<>>& initial_hparams() {
    static const std::map<std::string, Variable, std::less<>> kInitial = [] {
      std::map<std::string, Variable, std::less<>> out;
      for (const HparamRow& row : kHparams) {
        Variable& field = out[std::string(row.name)];
        field.type = std::string(row.type);
        if (row.elements > 0) {
          field.value.kind = Value::Kind::List;
          field.value.list = std::make_shared<Array>(static_cast<std::size_t>(row.elements),
                                                     convert(Value::integer(0), row.type));
        } else {
          field.value = initial(row);
        }
      }
      return out;
    }();
    return kInitial;
  }

  // An array field of hparams that this run has not made yet, named by `n` as identifier() or
  // member() would resolve it ((id x) in a method of hparams, with no local x; (mem (id hparams)
  // x)): its initial value, shared and never written, for a use that only reads it. nullptr
  // otherwise.
  const Value* pristine(const Node& n) {
    std::string_view name;
    if (n.is(Head::Id) && n.size() == 2) {
      if (local(n[1].text) != nullptr || !in_hparams_method()) return nullptr;
      name = n[1].text;
    } else if (n.is(Head::Mem) && n.size() == 3 && n[1].is(Head::Id) && n[1].size() == 2 &&
               n[1][1].text == "hparams") {
      name = n[2].text;
    } else {
      return nullptr;
    }
    if (hparams_.find(name) != hparams_.end()) return nullptr;
    const auto it = initial_hparams().find(name);
    if (it == initial_hparams().end() || it->second.value.kind != Value::Kind::List) return nullptr;
    return &it->second.value;
  }

  // Whether evaluating n can change no variable: numbers, strings, names and the operators on
  // them.
  static bool reads_only(const Node& n) {
    const Head head = n.op;
    if (head == Head::N || head == Head::F || head == Head::S || head == Head::Id) return true;
    if (head == Head::Un && n.size() == 3) return reads_only(n[2]);
    if (head == Head::Bin && n.size() == 4) return reads_only(n[2]) && reads_only(n[3]);
    return false;
  }

  static Value initial(const HparamRow& row) {
    const std::string text(row.initial);
    if (row.type == "float" || row.type == "double") {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      return end != text.c_str() && *end == '\0' ? Value::real(v) : Value{};
    }
    if (const auto c = find_constant(row.initial)) return Value::integer(*c);
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 0);
    return end != text.c_str() && *end == '\0' ? convert(Value::integer(v), row.type) : Value{};
  }

  // --- functions and scopes -----------------------------------------------------------------
  // Runs the table's function `name`, or `instead` when given.
  Value call_function(const std::string& name, const std::vector<Value>& args,
                      const ParsedFunction* instead) {
    const ParsedFunction* f = instead != nullptr ? instead : function(name);
    if (f == nullptr) return Value{};
    if (++depth_ > 16) throw std::runtime_error("llama.cpp table: calls nest too deep");
    const ParsedFunction* saved = current_;
    current_ = f;
    scopes_.emplace_back();
    const Nesting nesting(*this, saved);
    for (std::size_t i = 0; i < f->params.size(); ++i) {
      // Parameters not passed take their default: every default in the modelled code is 0.
      // A layer passed on (create_tensor_qkv's `layer`) stays a layer.
      const Value v = i < args.size() ? args[i] : Value::integer(0);
      const bool layer = v.kind == Value::Kind::Text && v.s.starts_with("layers[");
      scopes_.back()[f->params[i]] = Variable{v, layer ? "layer" : ""};
    }
    // A break or continue cannot leave a C++ function: only a return carries a value.
    if (statement(f->body) == Flow::Return) return std::move(returned_);
    return Value{};
  }

  Variable* local(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (auto found = it->find(name); found != it->end()) return &found->second;
    }
    return nullptr;
  }
  bool in_hparams_method() const {
    return current_ != nullptr && current_->row->name.starts_with("hparams.");
  }

  // --- statements ---------------------------------------------------------------------------
  Flow statement(const Node& n) {
    const Head head = n.op;
    if (head == Head::Block) {
      scopes_.emplace_back();
      const ScopeExit scope(scopes_);
      for (std::size_t i = 1; i < n.size(); ++i) {
        if (const Flow flow = statement(n[i]); flow != Flow::Next) return flow;
      }
    } else if (head == Head::Expr) {
      if (n[1].is(Head::Id) && n[1][1].text == "LLAMA_LOAD_LOCALS") {
        // The macro's declarations go into the caller's scope.
        const ParsedFunction* macro = function("LLAMA_LOAD_LOCALS");
        if (macro == nullptr) lost(n);
        for (std::size_t i = 1; i < macro->body.size(); ++i) {
          if (const Flow flow = statement(macro->body[i]); flow != Flow::Next) return flow;
        }
        return Flow::Next;
      }
      (void)eval(n[1]);
    } else if (head == Head::Decl) {
      // (decl name type expr line): `auto & layer = layers[i]` names the current layer.
      const std::string& name = n[1].text;
      const std::string& type = n[2].text;
      if (n[3].is(Head::Idx) && n[3][1].is(Head::Id) && n[3][1][1].text == "layers") {
        const Value at = eval(n[3][2]);
        if (at.kind != Value::Kind::Int) lost(n);
        scopes_.back()[name] = Variable{Value::text(fmt::format("layers[{}]", at.i)), "layer"};
        return Flow::Next;
      }
      // `auto & layer = layers[i].posnet`: a part of the layer, named the same way
      if (n[3].is(Head::Mem) && n[3][1].is(Head::Idx) && n[3][1][1].is(Head::Id) &&
          n[3][1][1][1].text == "layers") {
        const Value at = eval(n[3][1][2]);
        if (at.kind != Value::Kind::Int) lost(n);
        scopes_.back()[name] =
            Variable{Value::text(fmt::format("layers[{}].{}", at.i, n[3][2].text)), "layer"};
        return Flow::Next;
      }
      if ((type.starts_with("std::vector") || type.starts_with("std::unordered_set") ||
           type.starts_with("std::set")) &&
          n[3].is(Head::N)) {
        scopes_.back()[name] = Variable{Value::empty_list(), type};  // an empty container
        return Flow::Next;
      }
      scopes_.back()[name] = Variable{convert(eval(n[3]), type), type};
    } else if (head == Head::If) {
      // (if line cond then [else])
      const Value c = eval(n[2]);
      if (!c.known()) {
        if (!has_effect(n[3]) && (n.size() <= 4 || !has_effect(n[4]))) {
          forget_assignments(n);
          return Flow::Next;
        }
        lost_at_line(n[1].integer);
      }
      if (c.truthy()) return statement(n[3]);
      if (n.size() > 4) return statement(n[4]);
    } else if (head == Head::For) {
      // (for line var start limit body)
      const Value start = eval(n[3]);
      const Value limit = eval(n[4]);
      if (start.kind != Value::Kind::Int || limit.kind != Value::Kind::Int) {
        if (!has_effect(n[5])) {  // a loop over what ggufcheck does not model, to no effect
          forget_assignments(n[5]);
          return Flow::Next;
        }
        lost_at_line(n[1].integer);
      }
      if (limit.i - start.i > 4096) lost_at_line(n[1].integer);  // no modelled loop runs that far
      for (std::int64_t i = start.i; i < limit.i; ++i) {
        const Flow flow = loop_round(n[2].text, Value::integer(i), "int", n[5]);
        if (flow == Flow::Return) return flow;
        if (flow == Flow::Break) break;
      }
    } else if (head == Head::Foreach) {
      return foreach_statement(n);
    } else if (head == Head::Switch) {
      return switch_statement(n);
    } else if (head == Head::Break) {
      return Flow::Break;
    } else if (head == Head::Continue) {
      return Flow::Continue;
    } else if (head == Head::Try) {
      return try_statement(n);
    } else if (head == Head::Lambda) {
      // (lambda name "params" body line): a closure over the scopes it is called from, which are
      // the ones it was declared in (llama.cpp's lambdas capture by reference and are called in
      // the function that declares them)
      Value v;
      v.kind = Value::Kind::Lambda;
      v.lambda = &n;
      scopes_.back()[n[1].text] = Variable{v, "lambda"};
    } else if (head == Head::Unread) {
      // a function the generator could not translate: nothing of it is claimed
      if (!verdict_.lost_at) {
        const std::string_view where = current_ != nullptr ? current_->row->where : "";
        verdict_.lost_at = fmt::format("{} ({})", where, n[1].text);
      }
      throw Stop{};
    } else if (head == Head::Return) {
      returned_ = n.size() > 1 ? eval(n[1]) : Value{};
      return Flow::Return;
    } else if (head == Head::Throw && current_ != nullptr &&
               current_->row->name.ends_with(":create")) {
      refuse(Code::UnknownArchitecture, std::nullopt,
             fmt::format("llama.cpp knows the name of architecture \"{}\" but has no model for it: "
                         "it refuses the file (\"{}\", {})",
                         escape(arch_), n[1].text, location(n)),
             "convert the model to an architecture llama.cpp implements");
    } else if (head == Head::Throw) {
      refuse(
          Code::ModelValueOutOfRange, std::nullopt,
          fmt::format("llama.cpp refuses the hyperparameters: \"{}\" ({})", n[1].text, location(n)),
          "see the source line for the rule the values break");
    } else if (head == Head::Assert) {
      const Value c = eval(n[1]);
      if (!c.known()) lost(n);
      if (!c.truthy()) {
        refuse(Code::ModelValueOutOfRange, std::nullopt,
               fmt::format("llama.cpp aborts: GGML_ASSERT({}) fails ({})",
                           escape(source_text(n[1]), 200), location(n)),
               "see the source line for the rule the values break");
      }
    }
    // (skip ...): a switch naming the model size, which the loader checks nothing of.
    return Flow::Next;
  }

  // One round of a loop's body with `var` bound: Break after a break, Return after a return,
  // else Next.
  Flow loop_round(const std::string& var, const Value& value, const std::string& type,
                  const Node& body) {
    scopes_.emplace_back();
    const ScopeExit scope(scopes_);
    scopes_.back()[var] = Variable{value, type};
    const Flow flow = statement(body);
    return flow == Flow::Continue ? Flow::Next : flow;
  }

  // (foreach line var type range body): over the elements of an array ggufcheck knows.
  Flow foreach_statement(const Node& n) {
    const Value range = eval(n[4]);
    if (range.kind != Value::Kind::List) {
      if (!has_effect(n[5])) {
        forget_assignments(n[5]);
        return Flow::Next;
      }
      lost_at_line(n[1].integer);
    }
    if (range.list->size() > 4096) lost_at_line(n[1].integer);
    const Array elements = *range.list;  // the body may change the container
    for (const Value& e : elements) {
      const Flow flow = loop_round(n[2].text, convert(e, n[3].text), n[3].text, n[5]);
      if (flow == Flow::Return) return flow;
      if (flow == Flow::Break) break;
    }
    return Flow::Next;
  }

  // (switch line e (case (labels...) s...)...): from the matching case (or default) on, falling
  // through, to a break.
  Flow switch_statement(const Node& n) {
    const Value v = eval(n[2]);
    if (v.kind != Value::Kind::Int) {
      if (!has_effect(n)) {
        forget_assignments(n);
        return Flow::Next;
      }
      lost_at_line(n[1].integer);
    }
    std::size_t start = 0;
    for (std::size_t c = 3; c < n.size() && start == 0; ++c) {
      for (const Node& label : n[c][1].children) {
        if (label.is(Head::Default)) continue;
        const Value l = eval(label);
        if (l.kind != Value::Kind::Int) lost_at_line(n[1].integer);
        if (l.i == v.i) start = c;
      }
    }
    for (std::size_t c = 3; c < n.size() && start == 0; ++c) {
      for (const Node& label : n[c][1].children) {
        if (label.is(Head::Default)) start = c;
      }
    }
    if (start == 0) return Flow::Next;
    scopes_.emplace_back();
    const ScopeExit scope(scopes_);
    for (std::size_t c = start; c < n.size(); ++c) {
      for (std::size_t k = 2; k < n[c].size(); ++k) {
        const Flow flow = statement(n[c][k]);
        if (flow == Flow::Break) return Flow::Next;
        if (flow != Flow::Next) return flow;  // a return, or a continue of the loop around
      }
    }
    return Flow::Next;
  }

  // (try line body handler): llama.cpp's create_tensor throws for a required tensor that is
  // missing or misshapen, and a refusal throws; the handler then runs instead. What the body
  // found and used is undone.
  Flow try_statement(const Node& n) {
    const std::size_t findings = verdict_.findings.size();
    const std::vector<bool> consumed = consumed_;
    bool failed = false;
    try {
      // A return, break or continue leaves the try as it leaves any block.
      if (const Flow flow = statement(n[2]); flow != Flow::Next) return flow;
    } catch (const Stop&) {
      if (verdict_.lost_at) throw;
      failed = true;
    }
    if (!failed && verdict_.findings.size() == findings) return Flow::Next;
    verdict_.findings.resize(findings);
    consumed_ = consumed;
    return statement(n[3]);
  }

  Value call_lambda(const Node& lambda, const std::vector<Value>& args) {
    if (++depth_ > 16) throw std::runtime_error("llama.cpp table: calls nest too deep");
    scopes_.emplace_back();
    const Nesting nesting(*this, current_);
    std::string_view params = lambda[2].text;
    for (std::size_t i = 0; !params.empty(); ++i) {
      const std::size_t comma = params.find(',');
      const Value v = i < args.size() ? args[i] : Value::integer(0);
      const bool layer = v.kind == Value::Kind::Text && v.s.starts_with("layers[");
      scopes_.back()[std::string(params.substr(0, comma))] = Variable{v, layer ? "layer" : ""};
      params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
    }
    if (statement(lambda[3]) == Flow::Return) return std::move(returned_);
    return Value{};
  }

  // Code skipped because ggufcheck cannot tell whether it runs: what it may have assigned (a
  // variable, a field of hparams, an array std::fill fills) is no longer known, so that nothing
  // later is decided on a value the skipped code might have changed.
  void forget_assignments(const Node& n) {
    if (n.kind != Node::Kind::List) return;
    if (n.is(Head::Assign)) {
      const Node& target = n[2].is(Head::Idx) ? n[2][1] : n[2];
      if (Variable* var = lvalue(target)) var->value = Value{};
    } else if (n.is(Head::Call) && n.size() == 5 && n[1].is(Head::Id) &&
               n[1][1].text == "std::fill" && n[2].is(Head::Call) && n[2][1].is(Head::Mem)) {
      if (Variable* var = lvalue(n[2][1][1])) var->value = Value{};
    } else if (n.is(Head::Call) && n.size() > 1 && n[1].is(Head::Mem)) {
      // a container's insert, push_back, set, ...
      if (Variable* var = lvalue(n[1][1])) var->value = Value{};
    }
    for (const Node& c : n.children) forget_assignments(c);
  }

  // Whether a statement reads a key, creates a tensor, or can refuse: one ggufcheck cannot
  // follow must not be skipped.
  bool has_effect(const Node& n) {
    if (n.kind != Node::Kind::List) return false;
    const Head head = n.op;
    if (head == Head::Throw || head == Head::Assert || head == Head::Unread) return true;
    if (head == Head::Call && n.size() > 1 && n[1].is(Head::Id)) {
      if (const Variable* v = local(n[1][1].text); v != nullptr &&
                                                   v->value.kind == Value::Kind::Lambda &&
                                                   has_effect((*v->value.lambda)[3])) {
        return true;
      }
    }
    if (head == Head::Mem && n.size() > 2 &&
        (n[2].text == "get_key" || n[2].text == "get_arr" || n[2].text == "get_key_or_arr" ||
         n[2].text == "get_arr_n")) {
      return true;
    }
    if (head == Head::Call && n.size() > 1 && n[1].is(Head::Id) &&
        (n[1][1].text == "create_tensor" || function(n[1][1].text) != nullptr)) {
      return true;  // creates a tensor, or runs loading code of the table
    }
    return std::any_of(n.children.begin(), n.children.end(),
                       [this](const Node& c) { return has_effect(c); });
  }

  // --- expressions --------------------------------------------------------------------------
  Value eval(const Node& n) {
    const Head head = n.op;
    if (head == Head::N) return Value::integer(n[1].integer);
    if (head == Head::F)
      return Value::real(n[1].kind == Node::Kind::Real ? n[1].real
                                                       : static_cast<double>(n[1].integer));
    if (head == Head::S) return Value::text(n[1].text);
    if (head == Head::Id) return identifier(n[1].text);
    if (head == Head::Mem) return member(n);
    if (head == Head::Idx) return index(n);
    if (head == Head::Un) return unary(n);
    if (head == Head::Bin) return binary(n);
    if (head == Head::Tern) {
      const Value c = eval(n[1]);
      if (!c.known()) return Value{};
      return c.truthy() ? eval(n[2]) : eval(n[3]);
    }
    if (head == Head::Assign) return assign(n);
    if (head == Head::Call) return call(n);
    if (head == Head::List) {
      Value out;
      out.kind = Value::Kind::List;
      out.list = std::make_shared<Array>();
      for (std::size_t i = 1; i < n.size(); ++i) out.list->push_back(eval(n[i]));
      return out;
    }
    return Value{};
  }

  Value identifier(const std::string& name) {
    if (Variable* v = local(name)) return v->value;
    if (in_hparams_method()) {
      if (const Variable* field = hparam(name)) return field->value;
    }
    if (name == "arch") return Value::integer(arch_id_);
    if (auto it = model_members_.find(name); it != model_members_.end()) return it->second.value;
    if (const auto c = find_constant(name)) return Value::integer(*c);
    // a key's enum, passed on to a helper that reads it (qwen4exp_require_arr_len(ml, kid, n))
    if (name.starts_with("LLM_KV_") && find_row(kKeys, name) != nullptr) return Value::text(name);
    // a tensor's enum, passed to a lambda that names it (kimi-k3's conv(LLM_TENSOR_SSM_CONV1D_Q))
    if (name.starts_with("LLM_TENSOR_") && find_row(kTensors, name) != nullptr) {
      return Value::text(name);
    }
    return Value{};
  }

  // The variable an lvalue expression names: a local, a field of hparams, a tensor pointer
  // (a member of the model or of the current layer). nullptr when it is none of those.
  Variable* lvalue(const Node& n, std::string* layer_member = nullptr) {
    if (n.is(Head::Id)) {
      const std::string& name = n[1].text;
      if (Variable* v = local(name)) return v;
      if (in_hparams_method()) {
        if (Variable* field = hparam(name)) return field;
      }
      return &model_members_[name];
    }
    if (n.is(Head::Mem)) {
      std::string built_root;
      std::optional<std::string> built_path;
      const std::string* root = nullptr;
      const std::string* path = nullptr;
      if (n[1].is(Head::Id)) {  // a.b, the common form: no path to build
        root = &n[1][1].text;
        path = &n[2].text;
      } else {
        built_path = member_path(n, built_root);
        if (!built_path) return nullptr;
        root = &built_root;
        path = &*built_path;
      }
      if (*root == "hparams") return hparam(*path);
      if (Variable* v = local(*root); v != nullptr && v->type == "layer") {
        const std::string key = v->value.s + "." + *path;
        if (layer_member != nullptr) *layer_member = key;
        return &model_members_[key];
      }
    }
    return nullptr;
  }

  // a.b.c as the root name ("a") and the path of fields ("b.c"); nullopt for anything else.
  static std::optional<std::string> member_path(const Node& n, std::string& root) {
    if (n.is(Head::Id)) {
      root = n[1].text;
      return std::string();
    }
    if (!n.is(Head::Mem)) return std::nullopt;
    std::optional<std::string> base = member_path(n[1], root);
    if (!base) return std::nullopt;
    return base->empty() ? n[2].text : *base + "." + n[2].text;
  }

  Value member(const Node& n) {
    if (n[1].is(Head::Id)) {
      // a.b, the common form: resolved without building the path
      const std::string& root = n[1][1].text;
      const std::string& field = n[2].text;
      if (root == "ml" && field == "load_mtp") return Value::integer(0);  // the default params
      if (root == "hparams") {
        if (const Variable* f = hparam(field)) return f->value;
        return Value{};
      }
      if (const Variable* v = local(root); v != nullptr && v->type == "layer") {
        if (auto it = model_members_.find(v->value.s + "." + field); it != model_members_.end())
          return it->second.value;
        return Value::integer(0);  // a layer's tensor not created is null
      }
    }
    std::string root;
    if (const std::optional<std::string> path = member_path(n, root)) {
      if (root == "ml" && *path == "load_mtp") return Value::integer(0);  // the default params
      if (root == "hparams") {
        if (const Variable* field = hparam(*path)) return field->value;
        return Value{};
      }
      if (Variable* v = local(root); v != nullptr && v->type == "layer") {
        if (auto it = model_members_.find(v->value.s + "." + *path); it != model_members_.end())
          return it->second.value;
        if (n[1].is(Head::Mem)) {
          // a property of a layer's tensor: layer.wq->type
          const Value base = member(n[1]);
          if (base.tensor) return tensor_property(base, n[2].text);
        }
        return Value::integer(0);  // a layer's tensor not created is null
      }
    }
    const Value base = eval(n[1]);
    if (base.tensor) return tensor_property(base, n[2].text);
    return Value{};
  }

  // t->type, t->ne, t->tensor (a weight's tensor), t->name of a tensor the file holds.
  Value tensor_property(const Value& handle, const std::string& field) {
    if (handle.i <= 0 || static_cast<std::size_t>(handle.i) > tensors_.size()) return Value{};
    const TensorRef& ref = tensors_[static_cast<std::size_t>(handle.i - 1)];
    if (field == "tensor") return handle;
    if (field == "type") {
      return Value::integer(static_cast<std::int64_t>(ref.file->tensors[ref.index].type));
    }
    if (field == "name")
      return Value::text(std::string(tensor_name(static_cast<std::size_t>(handle.i - 1))));
    if (field == "ne") {
      Value out = Value::empty_list();
      const auto have = ref.file->dims(ref.index);
      for (std::size_t d = 0; d < kMaxDims; ++d) {
        const std::uint64_t ne = d < ref.file->tensors[ref.index].n_dims ? have[d] : 1;
        if (ne > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          return Value{};
        out.list->push_back(Value::integer(static_cast<std::int64_t>(ne)));
      }
      return out;
    }
    return Value{};
  }

  Value index(const Node& n) {
    // An array of hparams not made yet is read where it is, when the index cannot write to it.
    const Value* unmade = reads_only(n[2]) ? pristine(n[1]) : nullptr;
    const Value base = unmade != nullptr ? *unmade : eval(n[1]);
    const Value at = eval(n[2]);
    if (base.kind != Value::Kind::List || at.kind != Value::Kind::Int) return Value{};
    if (at.i < 0 || static_cast<std::size_t>(at.i) >= base.list->size()) return Value{};
    return (*base.list)[static_cast<std::size_t>(at.i)];
  }

  Value unary(const Node& n) {
    const Value v = eval(n[2]);
    if (!v.known()) return v;
    const std::string& op = n[1].text;
    if (op == "!") return Value::integer(v.truthy() ? 0 : 1);
    if (op == "-") return v.kind == Value::Kind::Int ? Value::integer(-v.i) : Value::real(-v.r);
    if (op == "~" && v.kind == Value::Kind::Int) return Value::integer(~v.i);
    if (op == "+") return v;
    return Value{};
  }

  Value binary(const Node& n) {
    const std::string& op = n[1].text;
    if (op == "&&" || op == "||") {
      const Value a = eval(n[2]);
      if (!a.known()) return a;
      if (op == "&&" && !a.truthy()) return Value::integer(0);
      if (op == "||" && a.truthy()) return Value::integer(1);
      const Value b = eval(n[3]);
      if (!b.known()) return b;
      return Value::integer(b.truthy() ? 1 : 0);
    }
    const Value a = eval(n[2]);
    const Value b = eval(n[3]);
    if (a.kind == Value::Kind::Text && b.kind == Value::Kind::Text) {
      if (op == "+") return Value::text(a.s + b.s);
      if (op == "==") return Value::integer(a.s == b.s ? 1 : 0);
      if (op == "!=") return Value::integer(a.s != b.s ? 1 : 0);
      return Value{};
    }
    if (!a.numeric() || !b.numeric()) return Value{};
    if (a.kind == Value::Kind::Int && b.kind == Value::Kind::Int) {
      const std::int64_t x = a.i;
      const std::int64_t y = b.i;
      std::int64_t out = 0;
      if (op == "+") {
        if (__builtin_add_overflow(x, y, &out)) return Value{};
      } else if (op == "-") {
        if (__builtin_sub_overflow(x, y, &out)) return Value{};
      } else if (op == "*") {
        if (__builtin_mul_overflow(x, y, &out)) return Value{};
      } else if (op == "/" || op == "%") {
        if (y == 0) divide_by_zero(n);
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) return Value{};
        out = op == "/" ? x / y : x % y;
      } else if (op == "<") {
        out = x < y;
      } else if (op == "<=") {
        out = x <= y;
      } else if (op == ">") {
        out = x > y;
      } else if (op == ">=") {
        out = x >= y;
      } else if (op == "==") {
        out = x == y;
      } else if (op == "!=") {
        out = x != y;
      } else if (op == "&") {
        out = x & y;
      } else if (op == "|") {
        out = x | y;
      } else if (op == "^") {
        out = x ^ y;
      } else if (op == "<<" && y >= 0 && y < 63) {
        out = x << y;
      } else if (op == ">>" && y >= 0 && y < 63) {
        out = x >> y;
      } else {
        return Value{};
      }
      return Value::integer(out);
    }
    const double x = a.as_real();
    const double y = b.as_real();
    if (op == "+") return Value::real(x + y);
    if (op == "-") return Value::real(x - y);
    if (op == "*") return Value::real(x * y);
    if (op == "/") return Value::real(x / y);
    if (op == "<") return Value::integer(x < y);
    if (op == "<=") return Value::integer(x <= y);
    if (op == ">") return Value::integer(x > y);
    if (op == ">=") return Value::integer(x >= y);
    if (op == "==") return Value::integer(x == y);
    if (op == "!=") return Value::integer(x != y);
    return Value{};
  }

  [[noreturn]] void divide_by_zero(const Node& n) {
    refuse(Code::ModelValueOutOfRange, std::nullopt,
           fmt::format("llama.cpp divides by zero computing a size from the hyperparameters "
                       "(near {}): it crashes",
                       current_ != nullptr ? current_->row->where : ""),
           "a head, expert or layer count is 0 where the architecture needs one");
    (void)n;
  }

  Value assign(const Node& n) {
    std::string layer_member;
    const Node& target = n[2];
    if (target.is(Head::Idx)) {
      // an element of an hparams array: is_swa_impl[il] = ...
      Value base = eval(target[1]);
      const Value at = eval(target[2]);
      Value v = eval(n[3]);
      if (base.kind == Value::Kind::List && at.kind == Value::Kind::Int && at.i >= 0 &&
          static_cast<std::size_t>(at.i) < base.list->size()) {
        (*base.list)[static_cast<std::size_t>(at.i)] = v;
      }
      return v;
    }
    Variable* var = lvalue(target, &layer_member);
    Value v = eval(n[3]);
    if (var == nullptr) return v;
    const std::string& op = n[1].text;
    if (op != "=") {
      // a op= b: computed as a op b (only |= on flags and += on counts appear)
      const Value current = var->value;
      if (!current.numeric() || !v.numeric()) {
        var->value = Value{};
        return var->value;
      }
      if (op == "|=" && current.kind == Value::Kind::Int && v.kind == Value::Kind::Int) {
        v = Value::integer(current.i | v.i);
      } else if (op == "+=") {
        v = current.kind == Value::Kind::Int && v.kind == Value::Kind::Int
                ? Value::integer(current.i + v.i)
                : Value::real(current.as_real() + v.as_real());
      } else {
        v = Value{};
      }
    }
    if (v.kind == Value::Kind::List && var->value.kind == Value::Kind::List) {
      // std::array assignment copies the elements
      var->value.list = std::make_shared<Array>(*v.list);
      return var->value;
    }
    var->value = var->type.empty() ? v : convert(v, var->type);
    return var->value;
  }

  std::vector<Value> arguments(const Node& n, std::size_t first) {
    std::vector<Value> out;
    for (std::size_t i = first; i < n.size(); ++i) out.push_back(eval(n[i]));
    return out;
  }

  Value call(const Node& n) {
    const Node& callee = n[1];
    if (callee.is(Head::Mem) && callee[1].is(Head::Id)) {
      const std::string& base = callee[1][1].text;
      const std::string& method = callee[2].text;
      if (base == "ml") return loader_call(method, n);
      if (base == "hparams" || (base == "this" && in_hparams_method())) {
        return call_function("hparams." + method, arguments(n, 2), nullptr);
      }
      if (base == "vocab" && method == "n_tokens") return n_tokens();
      if (base == "vocab" && method == "n_token_types") return n_token_types();
    }
    if (callee.is(Head::Mem)) return method_call(n);
    if (!callee.is(Head::Id)) return Value{};
    const std::string& name = callee[1].text;
    if (const Variable* v = local(name); v != nullptr && v->value.kind == Value::Kind::Lambda) {
      const Node* lambda = v->value.lambda;
      return call_lambda(*lambda, arguments(n, 2));
    }
    if (name == "load_arch_tensors") {
      if (tensor_code_ != nullptr) return call_function("", {}, tensor_code_);
      if (function(arch_ + ":load_arch_tensors") == nullptr) lost(n);
      return call_function(arch_ + ":load_arch_tensors", {}, nullptr);
    }
    if (name == "tn") {
      const std::optional<std::string> tensor = tensor_name_of(n);
      return tensor ? Value::text(*tensor) : Value{};
    }
    if (in_hparams_method() && function("hparams." + name) != nullptr) {
      return call_function("hparams." + name, arguments(n, 2), nullptr);
    }
    if (name == "create_tensor") return create_tensor(n);
    if (name != "load_hparams" && name.find(':') == std::string::npos &&
        !name.starts_with("hparams.") && function(name) != nullptr) {
      // a helper of llama_model_base the table holds (create_tensor_qkv, load_swa_pattern, ...)
      return call_function(name, arguments(n, 2), nullptr);
    }
    if (name == "load_arch_hparams") {
      return call_function(std::string(arch_) + ":load_arch_hparams", {}, nullptr);
    }
    if (name == "llama_rope_scaling_type_from_string") {
      const Value s = eval(n[2]);
      if (s.kind != Value::Kind::Text) return Value{};
      for (const NameRow& row : kRopeScaling) {
        if (row.format == s.s) {
          if (const auto c = find_constant(row.enum_name)) return Value::integer(*c);
        }
      }
      if (const auto c = find_constant("LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED")) {
        return Value::integer(*c);
      }
      return Value{};
    }
    if (name == "std::fill") {
      // std::fill(x.begin(), x.end(), v)
      if (n.size() == 5 && n[2].is(Head::Call) && n[2][1].is(Head::Mem)) {
        const Node& target = n[2][1][1];
        const bool unmade = pristine(target) != nullptr;
        Variable* var = unmade ? nullptr : lvalue(target);
        const Value v = eval(n[4]);
        if (unmade) {
          // An array of hparams not made yet, filled with the value it holds throughout (an
          // initial array is Array(n, value)): nothing changes, so it is not made for that
          // (load_hparams fills every array first).
          const Value* initial = pristine(target);  // unless eval made it
          if (initial != nullptr &&
              (initial->list->empty() || same_value(initial->list->front(), v))) {
            return Value{};
          }
          var = lvalue(target);
        }
        if (var != nullptr && var->value.kind == Value::Kind::List) {
          for (Value& e : *var->value.list) e = v;
        }
      }
      return Value{};
    }
    if (name == "std::to_string") {
      const Value v = eval(n[2]);
      if (v.kind != Value::Kind::Int) return Value{};
      return Value::text(std::to_string(v.i));
    }
    if (name == "std::max" || name == "std::min") {
      const Value a = eval(n[2]);
      const Value b = eval(n[3]);
      if (!a.numeric() || !b.numeric()) return Value{};
      const bool first =
          name == "std::max" ? a.as_real() >= b.as_real() : a.as_real() <= b.as_real();
      return first ? a : b;
    }
    return Value{};
  }

  // x.method(args) on a local or a field: the containers, strings and bitsets the loading code
  // uses. Anything else is not known.
  Value method_call(const Node& n) {
    const std::string& method = n[1][2].text;
    Variable* var = lvalue(n[1][1]);
    const Value self = var != nullptr ? var->value : eval(n[1][1]);
    if (self.kind == Value::Kind::Text) {
      if (method == "c_str" || method == "str") return self;
      if (method == "size" || method == "length") {
        return Value::integer(static_cast<std::int64_t>(self.s.size()));
      }
      if (method == "empty") return Value::integer(self.s.empty() ? 1 : 0);
      return Value{};
    }
    if (self.kind != Value::Kind::List) return Value{};
    Array& list = *self.list;
    if (method == "size") return Value::integer(static_cast<std::int64_t>(list.size()));
    if (method == "empty") return Value::integer(list.empty() ? 1 : 0);
    const std::vector<Value> args = arguments(n, 2);
    const auto same = [](const Value& a, const Value& b) {
      return a.kind == b.kind && a.i == b.i && a.r == b.r && a.s == b.s;
    };
    if (method == "count" && args.size() == 1) {
      return Value::integer(std::count_if(list.begin(), list.end(),
                                          [&](const Value& e) { return same(e, args[0]); }));
    }
    if ((method == "insert" || method == "push_back" || method == "emplace_back") &&
        args.size() == 1 && var != nullptr) {
      if (list.size() >= 4096) return Value{};  // no modelled container grows that far
      const bool set = var->type.find("set") != std::string::npos;
      if (!set || std::none_of(list.begin(), list.end(),
                               [&](const Value& e) { return same(e, args[0]); })) {
        list.push_back(args[0]);
      }
      return Value{};
    }
    // std::bitset<LLAMA_MAX_LAYERS>: set(i), reset(), test(i)
    if (method == "set" && args.size() == 1 && args[0].kind == Value::Kind::Int && args[0].i >= 0 &&
        static_cast<std::size_t>(args[0].i) < list.size()) {
      list[static_cast<std::size_t>(args[0].i)] = Value::integer(1);
      return Value{};
    }
    if (method == "reset" && args.empty()) {
      for (Value& e : list) e = Value::integer(0);
      return Value{};
    }
    if (method == "test" && args.size() == 1 && args[0].kind == Value::Kind::Int &&
        args[0].i >= 0 && static_cast<std::size_t>(args[0].i) < list.size()) {
      return list[static_cast<std::size_t>(args[0].i)];
    }
    return Value{};
  }

  // vocab.n_token_types(): tokenizer.ggml.token_type_count, which llama_vocab::impl::load reads
  // as a u32 when it is there (0 otherwise).
  Value n_token_types() {
    const auto it = keys_.find("tokenizer.ggml.token_type_count");
    if (it == keys_.end()) return Value::integer(0);
    if (file_index_.metadata[it->second].type() != ValueType::Uint32) return Value{};
    return scalar(it->second);
  }

  // vocab.n_tokens(): the tokens llama_vocab loaded. A vocabulary of type "none" or "no_vocab"
  // loads none, whatever tokenizer.ggml.tokens holds (llama_vocab::impl::load returns early).
  Value n_tokens() {
    if (const auto model = keys_.find("tokenizer.ggml.model");
        model != keys_.end() && file_index_.metadata[model->second].type() == ValueType::String) {
      const std::string_view name = c_string_prefix(file_index_.string_value(model->second));
      if (name == "none" || name == "no_vocab") return Value::integer(0);
    }
    const auto it = keys_.find("tokenizer.ggml.tokens");
    if (it == keys_.end() || file_index_.metadata[it->second].type() != ValueType::Array)
      return Value::integer(0);
    return Value::integer(static_cast<std::int64_t>(file_index_.array(it->second).count));
  }

  // --- llama_model_loader ---------------------------------------------------------------------
  // The names of the keys the loading code can ask for (names[r] for kKeys[r]), made once per
  // architecture and kept (formatting and hashing the 243 names for every run was a quarter of
  // its time, and every key read formatted its name again). Only known architectures get here
  // (run_loader), so the cache is bounded.
  struct ArchKeys {
    std::unordered_set<std::string> wanted;
    std::vector<std::string> names;
  };
  static const ArchKeys& arch_keys(std::string_view arch) {
    static std::mutex mutex;
    static std::map<std::string, ArchKeys, std::less<>> made;
    const std::lock_guard lock(mutex);
    if (const auto it = made.find(arch); it != made.end()) return it->second;
    ArchKeys keys;
    keys.wanted = {"tokenizer.ggml.tokens", "tokenizer.ggml.model"};
    for (const NameRow& row : kKeys) {
      keys.names.push_back(key_format(row, arch));
      keys.wanted.insert(keys.names.back());
    }
    return made.emplace(std::string(arch), std::move(keys)).first->second;
  }

  static std::string key_format(const NameRow& row, std::string_view arch) {
    std::string out(row.format);
    if (const std::size_t at = out.find("%s"); at != std::string::npos) out.replace(at, 2, arch);
    return out;
  }
  // The key's name for the architecture; empty when kv names no key.
  const std::string& key_name(const Node& kv) {
    static const std::string kNone;
    if (!kv.is(Head::Id)) return kNone;
    const NameRow* row = nullptr;
    if (const Variable* v = local(kv[1].text)) {
      // a parameter holding a key's enum
      if (v->value.kind == Value::Kind::Text) row = find_row(kKeys, v->value.s);
    } else {
      row = find_row(kKeys, kv[1].text);
    }
    if (row == nullptr) return kNone;
    if (keys_of_arch_ == nullptr) keys_of_arch_ = &arch_keys(arch_);
    return keys_of_arch_->names[static_cast<std::size_t>(row - kKeys)];
  }
  std::string_view tensor_name(std::size_t t) const {
    return c_string_prefix(tensors_[t].file->name(tensors_[t].index));
  }
  // The first tensor with this name (as llama.cpp compares names: C strings).
  std::optional<std::size_t> find_tensor(std::string_view name) const {
    const std::uint64_t h = seeded_hash(name);
    auto it = std::lower_bound(names_.begin(), names_.end(), std::pair{h, std::size_t{0}});
    for (; it != names_.end() && it->first == h; ++it) {
      if (tensor_name(it->second) == name) return it->second;
    }
    return std::nullopt;
  }

  Value scalar(std::size_t kv) {
    const MetadataEntry& e = file_index_.metadata[kv];
    const std::uint64_t bits = e.payload();
    switch (e.type()) {
      case ValueType::Uint8: return Value::integer(static_cast<std::uint8_t>(bits));
      case ValueType::Int8: return Value::integer(static_cast<std::int8_t>(bits));
      case ValueType::Uint16: return Value::integer(static_cast<std::uint16_t>(bits));
      case ValueType::Int16: return Value::integer(static_cast<std::int16_t>(bits));
      case ValueType::Uint32: return Value::integer(static_cast<std::uint32_t>(bits));
      case ValueType::Int32: return Value::integer(static_cast<std::int32_t>(bits));
      case ValueType::Uint64: return Value::integer(static_cast<std::int64_t>(bits));
      case ValueType::Int64: return Value::integer(static_cast<std::int64_t>(bits));
      case ValueType::Bool: return Value::integer(bits != 0 ? 1 : 0);
      case ValueType::Float32: {
        const auto word = static_cast<std::uint32_t>(bits);
        float f = 0;
        std::memcpy(&f, &word, sizeof f);
        return Value::real(f);
      }
      case ValueType::Float64: {
        double d = 0;
        std::memcpy(&d, &bits, sizeof d);
        return Value::real(d);
      }
      case ValueType::String: return Value::text(std::string(file_index_.string_value(kv)));
      default: return Value{};
    }
  }

  // The elements of an array of numbers (at most `limit`; callers checked the count).
  std::shared_ptr<Array> elements(std::size_t kv, std::size_t limit) {
    struct Collect {
      std::shared_ptr<Array> out = std::make_shared<Array>();
      std::size_t limit;
      bool scalar(ValueType type, std::uint64_t bits, std::uint64_t) {
        if (out->size() >= limit) return false;
        Value v;
        switch (type) {
          case ValueType::Float32: {
            const auto word = static_cast<std::uint32_t>(bits);
            float f = 0;
            std::memcpy(&f, &word, sizeof f);
            v = Value::real(f);
            break;
          }
          case ValueType::Int32: v = Value::integer(static_cast<std::int32_t>(bits)); break;
          case ValueType::Uint32: v = Value::integer(static_cast<std::uint32_t>(bits)); break;
          case ValueType::Bool:
          case ValueType::Int8: v = Value::integer(static_cast<std::int8_t>(bits) != 0); break;
          default: v = Value::integer(static_cast<std::int64_t>(bits));
        }
        out->push_back(v);
        return true;
      }
      bool string(std::string_view text, std::uint64_t, std::uint64_t) {
        if (out->size() >= limit) return false;
        out->push_back(Value::text(std::string(text)));
        return true;
      }
      bool begin_array(ValueType, std::uint64_t, std::uint64_t) { return true; }
      bool end_array() { return true; }
    };
    Collect collect;
    collect.limit = limit;
    (void)walk_value(file_index_, kv, collect);
    return collect.out;
  }

  static std::string type_name(ValueType t) { return std::string(to_string(t)); }

  Value loader_call(const std::string& method, const Node& n) {
    if (method == "get_arch") return Value::integer(arch_id_);
    if (method == "get_weight" || method == "get_tensor_meta") {
      // whether the file has the tensor (a null pointer when not)
      const Value name = n.size() > 2 ? eval(n[2]) : Value{};
      if (name.kind != Value::Kind::Text) return Value{};
      const std::optional<std::size_t> t = find_tensor(name.s);
      return t ? Value::tensor_at(*t) : Value::integer(0);
    }
    if (method != "get_key" && method != "get_key_or_arr" && method != "get_arr" &&
        method != "get_arr_n") {
      return Value{};
    }
    const std::string& key = key_name(n[2]);
    if (key.empty()) lost(n);
    // An array of hparams not made yet is made only when the key is there to be read into it.
    const bool unmade = pristine(n[3]) != nullptr;
    Variable* target = unmade ? nullptr : lvalue(n[3]);
    // get_key_or_arr(kv, array, n[, required]) has the layer count before `required`; into a
    // scalar, get_key_or_arr(kv, u32, required) has none.
    const bool with_count =
        method == "get_key_or_arr" &&
        (unmade || (target != nullptr && target->value.kind == Value::Kind::List));
    const std::size_t required_at = with_count ? 5 : 4;
    bool required = true;
    if (n.size() > required_at) {
      const Value r = eval(n[required_at]);
      if (!r.known()) lost(n);
      required = r.truthy();
    }
    const auto found = keys_.find(key);
    if (found == keys_.end()) {
      if (required) {
        refuse(Code::MissingModelKey, std::nullopt,
               fmt::format("key \"{}\" is missing: llama.cpp's {} loader requires it", key, arch_),
               "the converter that wrote the file did not write this hyperparameter");
      }
      return Value::integer(0);
    }
    if (unmade) target = lvalue(n[3]);
    const std::size_t kv = found->second;
    const ValueType type = file_index_.metadata[kv].type();
    const bool is_array = type == ValueType::Array;
    const std::string target_type = target != nullptr ? target->type : std::string();
    const bool target_is_array = target != nullptr && target->value.kind == Value::Kind::List;

    if (method == "get_arr_n") {
      if (!is_array) wrong_type(kv, key, "an array");
      if (target != nullptr) {
        target->value = convert(
            Value::integer(static_cast<std::int64_t>(file_index_.array(kv).count)), target_type);
      }
      return Value::integer(1);
    }
    if (method == "get_key_or_arr" && !with_count) {
      // a scalar u32 that may not be an array
      if (is_array) {
        if (required) {
          refuse(Code::ModelKeyWrongType, kv,
                 fmt::format("key \"{}\" is an array: llama.cpp reads a single value", key));
        }
        return Value::integer(0);
      }
    }
    if (method == "get_key_or_arr" && with_count) {
      const Value count = eval(n[4]);
      if (count.kind != Value::Kind::Int) lost(n);
      if (count.i > 512) {
        refuse(Code::ModelValueOutOfRange, kv,
               fmt::format("{} layers: llama.cpp reads per-layer values for at most 512", count.i));
      }
      if (is_array) {
        const std::uint64_t length = file_index_.array(kv).count;
        if (length != static_cast<std::uint64_t>(count.i)) {
          refuse(Code::LayerArrayLength, kv,
                 fmt::format("key \"{}\" has {} entries: llama.cpp wants one per layer, {}", key,
                             length, count.i),
                 "write one value per block, or a single value for all of them");
        }
        return read_array(kv, key, target, static_cast<std::size_t>(count.i));
      }
      const std::string element = element_type(target);
      check_scalar_type(kv, key, element, type);
      const Value v = convert(scalar(kv), element);
      if (target_is_array) {
        for (std::int64_t i = 0; i < count.i; ++i)
          (*target->value.list)[static_cast<std::size_t>(i)] = v;
      }
      return Value::integer(1);
    }
    if (method == "get_arr") {
      if (!is_array) wrong_type(kv, key, "an array");
      return read_array(kv, key, target, 512);
    }
    // get_key
    if (target_is_array) lost(n);
    check_scalar_type(kv, key, target_type, type);
    if (target != nullptr) target->value = convert(scalar(kv), target_type);
    return Value::integer(1);
  }

  static std::string element_type(const Variable* target) {
    return target == nullptr ? std::string() : target->type;
  }

  [[noreturn]] void wrong_type(std::size_t kv, const std::string& key, std::string_view wanted) {
    refuse(Code::ModelKeyWrongType, kv,
           fmt::format("key \"{}\" is {}: llama.cpp reads {}", key,
                       type_name(file_index_.metadata[kv].type()), wanted),
           "write the key with the type llama.cpp reads");
  }

  void check_scalar_type(std::size_t kv, const std::string& key, const std::string& ctype,
                         ValueType type) {
    const std::optional<ValueType> wanted = gguf_type_of(ctype);
    // A member of llama_model the tables do not type (general.name): read, not checked.
    if (!wanted) return;
    if (type != *wanted) wrong_type(kv, key, "a " + type_name(*wanted));
  }

  // get_arr into a std::array or std::vector: the element types it accepts
  // (u32/i32/bool for integers, f32 for floats, strings for strings), at most 512.
  Value read_array(std::size_t kv, const std::string& key, Variable* target, std::size_t limit) {
    const ArrayRecord& a = file_index_.array(kv);
    std::string element = element_type(target);
    const ValueType et = a.elements();
    if (element.starts_with("std::vector<") && element.ends_with(">")) {
      // a local std::vector<T>: get_arr's vector form, which takes no bool arrays
      element = element.substr(12, element.size() - 13);
      if (element == "llama_token") element = "int32_t";
      if (et == ValueType::Bool) {
        refuse(Code::ModelKeyWrongType, kv,
               fmt::format("key \"{}\" is an array of bool: llama.cpp reads arrays of strings, "
                           "f32, u32, i32 or u64 only here",
                           key));
      }
    }
    const bool integer_target = element == "uint32_t" || element == "int32_t" || element == "int";
    bool ok = false;
    if (et == ValueType::Uint32 || et == ValueType::Int32 || et == ValueType::Bool) {
      ok = integer_target;
    } else if (et == ValueType::Float32) {
      ok = element == "float";
    } else if (et == ValueType::String) {
      ok = element == "std::string" || element.starts_with("std::vector");
    } else if (et == ValueType::Uint64) {
      ok = element == "uint64_t";
    } else {
      refuse(Code::ModelKeyWrongType, kv,
             fmt::format("key \"{}\" is an array of {}: llama.cpp reads arrays of strings, f32, "
                         "u32, i32 or u64 only",
                         key, type_name(et)));
    }
    if (!ok && !element.empty() && !element.starts_with("std::vector")) {
      refuse(Code::ModelKeyWrongType, kv,
             fmt::format("key \"{}\" is an array of {}: llama.cpp reads {} elements", key,
                         type_name(et), element));
    }
    if (a.count > limit) {
      refuse(Code::ModelValueOutOfRange, kv,
             fmt::format("key \"{}\" has {} entries: llama.cpp reads at most {}", key, a.count,
                         limit));
    }
    const bool vector_target = target != nullptr && target->type.starts_with("std::vector");
    if (target != nullptr && target->value.kind == Value::Kind::List && !target->type.empty() &&
        !vector_target) {
      // a std::array of hparams: its elements, the rest kept (a local std::vector, below, is
      // cleared and takes the array whole, as get_arr does)
      const std::shared_ptr<Array> values = elements(kv, static_cast<std::size_t>(a.count));
      for (std::size_t i = 0; i < values->size() && i < target->value.list->size(); ++i) {
        (*target->value.list)[i] = convert((*values)[i], element);
      }
    } else if (target != nullptr) {
      Value list;
      list.kind = Value::Kind::List;
      list.list = elements(kv, static_cast<std::size_t>(a.count));
      target->value = list;
    }
    return Value::integer(1);
  }

  // --- create_tensor --------------------------------------------------------------------------
  Value create_tensor(const Node& n) {
    // (call (id create_tensor) (call (id tn) (id LLM_TENSOR_X) (s suffix) [bid [xid]]) (list dims)
    // flags)
    // or (call (id create_tensor) (id name) ...), a name made by tn() before (jina-bert-v2's
    // `const auto tn_ffn_up_weight = tn(...)`)
    const Node& tn = n[2];
    std::optional<std::string> tensor;
    if (tn.is(Head::Call)) {
      tensor = tensor_name_of(tn);
    } else if (tn.is(Head::Id)) {
      const Value held = identifier(tn[1].text);
      if (held.kind == Value::Kind::Text && !held.s.starts_with("LLM_")) tensor = held.s;
    }
    if (!tensor) lost(n);
    const std::string& name = *tensor;
    const auto named = rows_of_names_.find(name);
    if (named == rows_of_names_.end()) lost(n);
    const TensorRow* row = named->second;
    const Value dims = eval(n[3]);
    const Value flags_value = eval(n[4]);
    if (flags_value.kind != Value::Kind::Int || dims.kind != Value::Kind::List) lost(n);
    const std::int64_t flags = flags_value.i;
    const bool required = (flags & constant("TENSOR_NOT_REQUIRED")) == 0;
    const bool duplicated = (flags & constant("TENSOR_DUPLICATED")) != 0;
    const bool skip = (flags & constant("TENSOR_SKIP")) != 0;
    std::vector<std::int64_t> ne;
    for (const Value& d : *dims.list) {
      if (d.kind != Value::Kind::Int) lost(n);
      ne.push_back(d.i);
    }
    const std::optional<std::size_t> found = find_tensor(name);
    if (!found) {
      if (required) {
        LoaderFinding f;
        f.code = Code::MissingTensor;
        f.field = "tensors";
        f.offset = missing_tensor_offset();
        f.message = fmt::format(
            "tensor \"{}\" is missing: llama.cpp's {} loader requires it "
            "(shape {})",
            name, arch_, shape_text(ne));
        f.hint = "the file lacks a tensor of the architecture, or block_count is too large";
        verdict_.findings.push_back(std::move(f));
      }
      return Value::integer(0);
    }
    const TensorRef& ref = tensors_[*found];
    const auto have = ref.file->dims(ref.index);
    bool same = true;
    for (std::size_t d = 0; d < kMaxDims; ++d) {
      const std::uint64_t want = d < ne.size() ? static_cast<std::uint64_t>(ne[d]) : 1;
      const std::uint64_t got = d < ref.file->tensors[ref.index].n_dims ? have[d] : 1;
      if (want != got) same = false;
    }
    if (ne.size() > kMaxDims) same = false;
    if (!same && (flags & constant("TENSOR_ALLOW_RESHAPE")) != 0) {
      // check_tensor_dims compares the element counts only; then the reshaped tensor must keep
      // its byte size (a GGML_ASSERT), which for a block type depends on its rows: followed for
      // the plain types only
      std::optional<std::uint64_t> want = 1;
      for (const std::int64_t d : ne) {
        if (!want || d < 0 || __builtin_mul_overflow(*want, static_cast<std::uint64_t>(d), &*want))
          want = std::nullopt;
      }
      std::uint64_t got = 1;
      for (std::uint32_t d = 0; d < ref.file->tensors[ref.index].n_dims && d < kMaxDims; ++d) {
        if (__builtin_mul_overflow(got, have[d], &got)) lost(n);
      }
      const std::int64_t type = ref.file->tensors[ref.index].type;
      const bool plain =
          std::any_of(std::begin(kPlainTypes), std::end(kPlainTypes),
                      [&](std::string_view plain_type) { return constant(plain_type) == type; });
      if (want && *want == got) {
        if (!plain) lost(n);
        same = true;
      }
    }
    if (!same) {
      std::vector<std::int64_t> got;
      for (std::uint32_t d = 0; d < ref.file->tensors[ref.index].n_dims && d < kMaxDims; ++d)
        got.push_back(static_cast<std::int64_t>(have[d]));
      add_tensor_finding(Code::TensorWrongShape, ref,
                         fmt::format("tensor \"{}\" has shape {}: llama.cpp's {} loader expects "
                                     "{} from the hyperparameters",
                                     escape(name), shape_text(got), arch_, shape_text(ne)),
                         "the tensor or the hyperparameters are wrong");
    }
    if (duplicated && consumed_[*found]) return Value::tensor_at(*found);
    if (!duplicated) consumed_[*found] = true;
    if (row->unused || skip) return Value::integer(0);  // counted, then dropped (a null pointer)
    return Value::tensor_at(*found);
  }

  // The name tn(LLM_TENSOR_X, "suffix", bid[, xid]) makes: (call (id tn) (id X) [suffix [bid]]).
  std::optional<std::string> tensor_name_of(const Node& tn) {
    // LLM_TN's two call forms: tn(tensor, suffix, bid, xid) and tn(tensor, bid, xid), the
    // second without a suffix (mamba's "blk.%d.ssm_a")
    if (!tn.is(Head::Call) || tn.size() < 3 || !tn[2].is(Head::Id)) return std::nullopt;
    const TensorRow* row = find_row(kTensors, tn[2][1].text);
    if (row == nullptr) {
      // a variable that holds the enum (a lambda's llm_tensor parameter)
      const Value held = identifier(tn[2][1].text);
      if (held.kind == Value::Kind::Text) row = find_row(kTensors, held.s);
    }
    if (row == nullptr) return std::nullopt;
    std::optional<std::string> suffix;
    std::size_t next = 3;
    if (tn.size() > next) {
      const Value first = eval(tn[next]);
      if (first.kind == Value::Kind::Text) {
        suffix = first.s;
        ++next;
      } else if (first.kind != Value::Kind::Int) {
        return std::nullopt;
      }
    }
    std::string name(row->format);
    for (int number = 0; number < 2; ++number) {  // the block (bid), then the expert (xid)
      const std::size_t at = name.find("%d");
      if (at == std::string::npos) break;
      if (tn.size() <= next) return std::nullopt;
      const Value id = eval(tn[next++]);
      if (id.kind != Value::Kind::Int) return std::nullopt;
      name.replace(at, 2, std::to_string(id.i));
    }
    if (suffix) name += "." + *suffix;
    rows_of_names_[name] = row;  // create_tensor's: the row of a name made before it
    return name;
  }

  // Where a missing tensor is reported: the first shard's first tensor info, or its metadata when
  // it holds no tensors (a split set may keep them all in later shards).
  std::uint64_t missing_tensor_offset() const {
    for (const TensorRef& ref : tensors_) {
      if (ref.shard == 0) return ref.file->tensors[ref.index].name_offset;
    }
    return file_index_.metadata.size() > 0 ? file_index_.metadata[0].key_offset() : 0;
  }

  static std::string shape_text(const std::vector<std::int64_t>& ne) {
    return fmt::format("[{}]", fmt::join(ne, ", "));
  }
  static std::int64_t constant(std::string_view name) { return find_constant(name).value_or(0); }
  // The ggml types of one element per value (no blocks): a reshape keeps their byte size.
  static constexpr std::string_view kPlainTypes[] = {
      "GGML_TYPE_F32", "GGML_TYPE_F16", "GGML_TYPE_BF16", "GGML_TYPE_F64",
      "GGML_TYPE_I8",  "GGML_TYPE_I16", "GGML_TYPE_I32",  "GGML_TYPE_I64"};

  const FileIndex& file_index_;
  std::string arch_;
  std::span<const TensorRef> tensors_;
  LoaderVerdict& verdict_;
  int arch_id_ = -1;
  std::unordered_map<std::string, std::size_t> keys_;
  const ArchKeys* keys_of_arch_ = nullptr;
  std::vector<std::pair<std::uint64_t, std::size_t>> names_;
  std::vector<bool> consumed_;
  // the table row of each tensor name tn() made, for create_tensor given such a name
  std::map<std::string, const TensorRow*, std::less<>> rows_of_names_;
  std::map<std::string, Variable, std::less<>> hparams_;
  std::map<std::string, Variable> model_members_;
  std::vector<std::map<std::string, Variable>> scopes_;
  const ParsedFunction* current_ = nullptr;
  int depth_ = 0;
  Value returned_;  // what the last `return` returned (Flow::Return)

  // Leaves a scope however the statements in it end (a Stop is still an exception).
  struct ScopeExit {
    std::vector<std::map<std::string, Variable>>& scopes;
    explicit ScopeExit(std::vector<std::map<std::string, Variable>>& s) : scopes(s) {}
    ScopeExit(const ScopeExit&) = delete;
    ScopeExit& operator=(const ScopeExit&) = delete;
    ~ScopeExit() { scopes.pop_back(); }
  };
  // Leaves a call: its scope, its depth, and the function that called it.
  struct Nesting {
    Loader& loader;
    const ParsedFunction* caller;
    Nesting(Loader& l, const ParsedFunction* c) : loader(l), caller(c) {}
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    ~Nesting() {
      loader.scopes_.pop_back();
      loader.current_ = caller;
      --loader.depth_;
    }
  };

 public:
  const ParsedFunction* tensor_code_ = nullptr;  // replaces load_arch_tensors (tests)
};

}  // namespace

bool known_architecture(std::string_view name) {
  return std::any_of(std::begin(kArchs), std::end(kArchs),
                     [&](const ArchRow& row) { return row.name == name; });
}

std::vector<std::string_view> architecture_names() {
  std::vector<std::string_view> out;
  for (const ArchRow& row : kArchs) out.push_back(row.name);
  return out;
}

bool modelled_architecture(std::string_view name) {
  return known_architecture(name) && function(std::string(name) + ":load_arch_tensors") != nullptr;
}

std::string_view llama_cpp_tables_version() {
  return kVersion[0];
}

namespace {

// The interpreter met what it cannot run (calls nested too deep, a table it cannot read): no
// verdict of the loader's is claimed (GGUF7016, fail closed), and the file's check goes on.
LoaderVerdict& interpreter_failed(LoaderVerdict& verdict, const std::exception& e) {
  verdict.tensors_modelled = false;
  if (!verdict.lost_at) verdict.lost_at = fmt::format("ggufcheck's interpreter ({})", e.what());
  return verdict;
}

}  // namespace

LoaderVerdict run_loader(const FileIndex& first, std::string_view architecture,
                         std::span<const TensorRef> tensors, bool check_tensors) {
  LoaderVerdict verdict;
  verdict.known_architecture = known_architecture(architecture);
  if (!verdict.known_architecture) return verdict;
  Loader loader(first, architecture, tensors, verdict);
  try {
    loader.create();
    loader.load_hparams();
  } catch (const Stop&) {
    return verdict;
  } catch (const std::exception& e) {
    return interpreter_failed(verdict, e);
  }
  if (!check_tensors || !modelled_architecture(architecture)) return verdict;
  try {
    loader.load_tensors();
    verdict.tensors_modelled = true;
  } catch (const Stop&) {
  } catch (const std::exception& e) {
    return interpreter_failed(verdict, e);
  }
  return verdict;
}

LoaderVerdict run_loader_with_tensor_code(const FileIndex& first, std::string_view architecture,
                                          std::span<const TensorRef> tensors,
                                          std::string_view tensor_code) {
  static constexpr FunctionRow kRow{"test:load_arch_tensors", "", "test.cpp:1", ""};
  ParsedFunction code;
  code.row = &kRow;
  code.body = sexpr::parse(tensor_code);
  LoaderVerdict verdict;
  verdict.known_architecture = known_architecture(architecture);
  if (!verdict.known_architecture) return verdict;
  Loader loader(first, architecture, tensors, verdict);
  loader.tensor_code_ = &code;
  try {
    loader.load_hparams();
    loader.load_tensors();
    verdict.tensors_modelled = true;
  } catch (const Stop&) {
  } catch (const std::exception& e) {
    return interpreter_failed(verdict, e);
  }
  return verdict;
}

}  // namespace ggufcheck::detail
