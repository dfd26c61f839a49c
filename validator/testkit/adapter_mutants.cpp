#include "adapter_mutants.hpp"

#include <algorithm>
#include <random>
#include <utility>

#include "documents.hpp"

namespace ggufcheck::testing {

namespace {

class Generator {
 public:
  Generator(std::uint64_t seed, std::vector<AdapterMutant>& out) : rng_(seed), out_(out) {}

  void of(const BaseModel& base, const std::vector<BaseModel>& bases) {
    base_ = &base;
    const Document clean = adapter_document(base.document);
    add("adapter", "the adapter of every 2-D tensor", clean);
    keys(clean);
    tensors(clean);
    // Another architecture's adapter on this base.
    for (const BaseModel& other : bases) {
      if (other.spec.arch == base.spec.arch) continue;
      if (pick(4) != 0) continue;
      add("other-base", "the adapter of " + other.spec.name, adapter_document(other.document));
    }
  }

 private:
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }

  void add(std::string kind, std::string what, Document adapter) {
    out_.push_back({std::move(kind), base_->spec.name, std::move(what), std::move(adapter)});
  }

  static KeyValue* key(Document& d, std::string_view name) {
    for (KeyValue& kv : d.metadata) {
      if (kv.key == name) return &kv;
    }
    return nullptr;
  }
  static void drop(Document& d, std::string_view name) {
    std::erase_if(d.metadata, [&](const KeyValue& kv) { return kv.key == name; });
  }
  static void set(Document& d, std::string name, Value value) {
    if (KeyValue* kv = key(d, name)) {
      kv->value = std::move(value);
    } else {
      d.metadata.push_back({std::move(name), std::move(value), {}});
    }
  }

  void keys(const Document& clean) {
    const auto changed = [&](std::string what, auto change) {
      Document d = clean;
      change(d);
      add("keys", std::move(what), std::move(d));
    };
    changed("no general.type", [](Document& d) { drop(d, "general.type"); });
    changed("general.type = \"model\"",
            [](Document& d) { set(d, "general.type", Value::string("model")); });
    changed("general.type u32", [](Document& d) { set(d, "general.type", Value::u32(1)); });
    changed("no general.architecture", [](Document& d) { drop(d, "general.architecture"); });
    changed("general.architecture u32",
            [](Document& d) { set(d, "general.architecture", Value::u32(1)); });
    changed("general.architecture \"no-such-arch\"",
            [](Document& d) { set(d, "general.architecture", Value::string("no-such-arch")); });
    changed("no adapter.type", [](Document& d) { drop(d, "adapter.type"); });
    changed("adapter.type = \"alora\"",
            [](Document& d) { set(d, "adapter.type", Value::string("alora")); });
    changed("adapter.type = \"LoRA\"",
            [](Document& d) { set(d, "adapter.type", Value::string("LoRA")); });
    changed("adapter.type u8", [](Document& d) { set(d, "adapter.type", Value::u8(0)); });
    changed("no adapter.lora.alpha", [](Document& d) { drop(d, "adapter.lora.alpha"); });
    changed("adapter.lora.alpha u32",
            [](Document& d) { set(d, "adapter.lora.alpha", Value::u32(16)); });
    changed("adapter.lora.alpha f64",
            [](Document& d) { set(d, "adapter.lora.alpha", Value::f64(16)); });
    changed("adapter.lora.alpha string",
            [](Document& d) { set(d, "adapter.lora.alpha", Value::string("16")); });
    changed("invocation tokens u32[3]", [](Document& d) {
      set(d, "adapter.alora.invocation_tokens",
          Value::array(ValueType::Uint32, {Value::u32(1), Value::u32(2), Value::u32(3)}));
    });
    changed("invocation tokens u32[0]", [](Document& d) {
      set(d, "adapter.alora.invocation_tokens", Value::array(ValueType::Uint32, {}));
    });
    changed("invocation tokens i32[1]", [](Document& d) {
      set(d, "adapter.alora.invocation_tokens", Value::array(ValueType::Int32, {Value::i32(1)}));
    });
    changed("invocation tokens u32 scalar",
            [](Document& d) { set(d, "adapter.alora.invocation_tokens", Value::u32(1)); });
  }

  // The index of a random tensor whose name ends with suffix (not token_embd's unless allowed).
  std::size_t any(const Document& d, std::string_view suffix, bool token_embd = true) {
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < d.tensors.size(); ++i) {
      const std::string& n = d.tensors[i].name;
      if (!n.ends_with(suffix)) continue;
      if (!token_embd && n.starts_with("token_embd.")) continue;
      found.push_back(i);
    }
    return found.empty() ? d.tensors.size() : found[pick(found.size())];
  }

  void tensors(const Document& clean) {
    if (clean.tensors.empty()) return;
    const auto changed = [&](std::string kind, std::string what, auto change) {
      Document d = clean;
      if (change(d)) add(std::move(kind), std::move(what), std::move(d));
    };
    for (const char* half : {".lora_a", ".lora_b"}) {
      changed("pair-missing", std::string("a ") + half + " dropped", [&](Document& d) {
        const std::size_t i = any(d, half);
        if (i == d.tensors.size()) return false;
        d.tensors.erase(d.tensors.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
      });
    }
    changed("rank", "a lora_b's rank + 1", [&](Document& d) {
      const std::size_t i = any(d, ".lora_b", false);
      if (i == d.tensors.size()) return false;
      d.tensors[i].dims[0] += 1;
      return true;
    });
    changed("rank", "a lora_a's rank + 1", [&](Document& d) {
      const std::size_t i = any(d, ".lora_a", false);
      if (i == d.tensors.size()) return false;
      d.tensors[i].dims[1] += 1;
      return true;
    });
    changed("rank", "token_embd's lora_a rank + 1 (not checked by llama.cpp)", [&](Document& d) {
      for (Tensor& t : d.tensors) {
        if (t.name == "token_embd.weight.lora_a") {
          t.dims[0] += 1;
          return true;
        }
      }
      return false;
    });
    changed("shape", "a lora_a's ne[0] + 32", [&](Document& d) {
      const std::size_t i = any(d, ".lora_a", false);
      if (i == d.tensors.size()) return false;
      d.tensors[i].dims[0] += 32;
      return true;
    });
    changed("shape", "a lora_b's ne[1] + 1", [&](Document& d) {
      const std::size_t i = any(d, ".lora_b", false);
      if (i == d.tensors.size()) return false;
      d.tensors[i].dims[1] += 1;
      return true;
    });
    changed("shape", "token_embd's pair written like the others", [&](Document& d) {
      Tensor* a = nullptr;
      Tensor* b = nullptr;
      for (Tensor& t : d.tensors) {
        if (t.name == "token_embd.weight.lora_a") a = &t;
        if (t.name == "token_embd.weight.lora_b") b = &t;
      }
      if (a == nullptr || b == nullptr) return false;
      const std::uint64_t rank = a->dims[0], n_vocab = a->dims[1], n_embd = b->dims[1];
      a->dims = {n_embd, rank};
      b->dims = {rank, n_vocab};
      return n_embd != n_vocab;
    });
    changed("name", "a pair renamed .lora_c / .lora_d", [&](Document& d) {
      const std::size_t i = any(d, ".lora_a");
      if (i == d.tensors.size()) return false;
      std::string& n = d.tensors[i].name;
      n.replace(n.size() - 7, 7, ".lora_c");
      return true;
    });
    changed("name", "a pair for a tensor the base lacks", [&](Document& d) {
      d.tensors.push_back({"blk.99.attn_q.weight.lora_a", {64, 4}, 0, {}, {}});
      d.tensors.push_back({"blk.99.attn_q.weight.lora_b", {4, 64}, 0, {}, {}});
      return true;
    });
    changed("name", "a norm vector beside the pairs", [&](Document& d) {
      d.tensors.push_back({"blk.0.attn_norm.weight", {64}, 0, {}, {}});
      return true;
    });
    changed("name", "a tensor of the base without suffix", [&](Document& d) {
      const std::size_t i = any(d, ".lora_a");
      if (i == d.tensors.size()) return false;
      Tensor t = d.tensors[i];
      t.name.resize(t.name.size() - 7);
      d.tensors.push_back(std::move(t));
      return true;
    });
    changed("type", "every lora_b F16", [&](Document& d) {
      for (Tensor& t : d.tensors) {
        if (t.name.ends_with(".lora_b")) t.type = 1;
      }
      return true;
    });
    changed("empty", "no tensors", [&](Document& d) {
      d.tensors.clear();
      return true;
    });
    // A pair for a 3-D base tensor (a MoE's experts): llama.cpp compares ne[0] and ne[1] only.
    for (const Tensor& t : base_->document.tensors) {
      if (t.dims.size() != 3) continue;
      changed("expert", "a pair for " + t.name, [&](Document& d) {
        d.tensors.push_back({t.name + ".lora_a", {t.dims[0], 4}, 0, {}, {}});
        d.tensors.push_back({t.name + ".lora_b", {4, t.dims[1]}, 0, {}, {}});
        return true;
      });
      break;
    }
  }

  std::mt19937_64 rng_;
  std::vector<AdapterMutant>& out_;
  const BaseModel* base_ = nullptr;
};

}  // namespace

std::vector<AdapterMutant> adapter_mutants(const std::vector<BaseModel>& bases,
                                           std::uint64_t seed) {
  std::vector<AdapterMutant> out;
  Generator g(seed, out);
  for (const BaseModel& base : bases) g.of(base, bases);
  return out;
}

}  // namespace ggufcheck::testing
