// The part of ggml's C ABI (gguf.h and ggml.h of llama.cpp's libggml-base.so) that the project
// calls, declared once, and the library loaded at run time with dlopen: the reference reader is
// the prebuilt library scripts/setup.sh fetches, never built or linked here. Used by the
// differential test and fuzzer (ggml_reference.hpp), the benchmark and the conformance adapter
// (conformance/adapters/llama_cpp_reader.cpp). Only pointers, integers and one two-field struct
// passed by value cross the ABI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace ggufcheck::testing::ggml {

struct ggml_context;
struct gguf_context;
struct gguf_init_params {
  bool no_alloc;
  ggml_context** ctx;
};
// The first fields of struct ggml_tensor, stable for years.
struct ggml_tensor_prefix {
  int type;
  void* buffer;
  std::int64_t ne[4];
};
// enum ggml_log_level, enum gguf_type and enum ggml_type are ints.
using LogCallback = void (*)(int level, const char* text, void* user_data);

// X(name, return type, parameters): every function, under its C name.
#define GGUFCHECK_GGML_FUNCTIONS(X)                                                               \
  X(gguf_init_from_file, gguf_context*, (const char* fname, gguf_init_params params))             \
  X(gguf_free, void, (gguf_context * ctx))                                                        \
  X(gguf_get_version, std::uint32_t, (const gguf_context* ctx))                                   \
  X(gguf_get_alignment, std::size_t, (const gguf_context* ctx))                                   \
  X(gguf_get_data_offset, std::size_t, (const gguf_context* ctx))                                 \
  X(gguf_get_n_kv, std::int64_t, (const gguf_context* ctx))                                       \
  X(gguf_get_key, const char*, (const gguf_context* ctx, std::int64_t key_id))                    \
  X(gguf_get_kv_type, int, (const gguf_context* ctx, std::int64_t key_id))                        \
  X(gguf_get_arr_type, int, (const gguf_context* ctx, std::int64_t key_id))                       \
  X(gguf_get_arr_n, std::size_t, (const gguf_context* ctx, std::int64_t key_id))                  \
  X(gguf_get_arr_data, const void*, (const gguf_context* ctx, std::int64_t key_id))               \
  X(gguf_get_arr_str, const char*, (const gguf_context* ctx, std::int64_t key_id, std::size_t i)) \
  X(gguf_get_val_data, const void*, (const gguf_context* ctx, std::int64_t key_id))               \
  X(gguf_get_val_str, const char*, (const gguf_context* ctx, std::int64_t key_id))                \
  X(gguf_get_n_tensors, std::int64_t, (const gguf_context* ctx))                                  \
  X(gguf_get_tensor_name, const char*, (const gguf_context* ctx, std::int64_t id))                \
  X(gguf_get_tensor_type, int, (const gguf_context* ctx, std::int64_t id))                        \
  X(gguf_get_tensor_offset, std::size_t, (const gguf_context* ctx, std::int64_t id))              \
  X(gguf_get_tensor_size, std::size_t, (const gguf_context* ctx, std::int64_t id))                \
  X(ggml_free, void, (ggml_context * ctx))                                                        \
  X(ggml_get_tensor, ggml_tensor_prefix*, (ggml_context * ctx, const char* name))                 \
  X(ggml_n_dims, int, (const ggml_tensor_prefix* tensor))                                         \
  X(ggml_type_name, const char*, (int type))                                                      \
  X(ggml_validate_row_data, bool, (int type, const void* data, std::size_t nbytes))               \
  X(ggml_log_set, void, (LogCallback callback, void* user_data))

// X(name, result, parameters) over a list of functions: the function pointer members of a
// table, and their resolution from a SharedObject `library` into a table `table`.
#define GGUFCHECK_ABI_MEMBER(name, result, parameters) result(*name) parameters = nullptr;
#define GGUFCHECK_ABI_RESOLVE(name, result, parameters) \
  table.name = reinterpret_cast<result(*) parameters>(library.symbol(#name));

struct Api {
  GGUFCHECK_GGML_FUNCTIONS(GGUFCHECK_ABI_MEMBER)
};

// The library could not be loaded, or lacks a function; the message says which.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A library opened with dlopen (RTLD_NOW | RTLD_LOCAL) and closed with it; symbol() finds a
// function in it or in the libraries it depends on. Shared with the model loader's reference
// (llama_loader_reference.cpp), which declares its own part of llama.h the same way.
class SharedObject {
 public:
  // Throws LoadError when the library cannot be loaded.
  explicit SharedObject(const std::string& path);
  // Throws LoadError when the library has no such symbol.
  [[nodiscard]] void* symbol(const char* name) const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(void* handle) const;
  };
  std::string path_;
  std::unique_ptr<void, Closer> handle_;
};

class Library {
 public:
  // dlopen()s the library at `path` and resolves every function of Api.
  explicit Library(const std::string& path);
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  [[nodiscard]] const Api& api() const { return api_; }

 private:
  SharedObject library_;
  Api api_;
};

// gguf_init_from_file as llama.cpp's model loader calls it for a single-file model
// (llama-model-loader.cpp): tensor metadata only (no_alloc), in a ggml context of its own. Frees
// both contexts; gguf() is null when the reader rejects the file.
class Loaded {
 public:
  Loaded(const Api& api, const char* path);
  ~Loaded();
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;

  [[nodiscard]] gguf_context* gguf() const { return gguf_; }
  [[nodiscard]] ggml_context* tensors() const { return tensors_; }

 private:
  const Api& api_;
  ggml_context* tensors_ = nullptr;
  gguf_context* gguf_ = nullptr;
};

}  // namespace ggufcheck::testing::ggml
