#include "ggml_reader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "fixtures.hpp"

namespace ggufcheck::bench {

namespace {

// The few declarations of ggml's gguf.h that the benchmark needs; only pointers cross the ABI.
struct ggml_context;
struct gguf_context;
struct gguf_init_params {
  bool no_alloc;
  ggml_context** ctx;
};
using GgufInitFromFile = gguf_context* (*)(const char* fname, gguf_init_params params);
using GgufFree = void (*)(gguf_context* ctx);
using GgmlFree = void (*)(ggml_context* ctx);

template <typename Function>
Function symbol(void* handle, const char* name, const std::string& library_path) {
  void* address = ::dlsym(handle, name);
  if (address == nullptr)
    throw BenchError(fmt::format("{} has no function {}", library_path, name));
  return reinterpret_cast<Function>(address);
}

}  // namespace

struct GgmlReader::Functions {
  GgufInitFromFile init_from_file;
  GgufFree gguf_free;
  GgmlFree ggml_free;
};

void GgmlReader::Closer::operator()(void* handle) const {
  ::dlclose(handle);
}

GgmlReader::GgmlReader(const std::string& library_path)
    : library_(::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
  if (!library_) {
    throw BenchError(
        fmt::format("cannot load ggml's reader: {} (run scripts/setup.sh, or set "
                    "GGUFCHECK_GGML_LIB or --ggml-lib)",
                    ::dlerror()));
  }
  void* handle = library_.get();
  functions_ = std::make_unique<const Functions>(
      Functions{symbol<GgufInitFromFile>(handle, "gguf_init_from_file", library_path),
                symbol<GgufFree>(handle, "gguf_free", library_path),
                symbol<GgmlFree>(handle, "ggml_free", library_path)});
}

GgmlReader::~GgmlReader() = default;

bool GgmlReader::load(const std::string& file) const {
  // As llama.cpp's model loader calls it: tensor metadata only, in a ggml context of its own.
  ggml_context* tensors = nullptr;
  gguf_context* gguf = functions_->init_from_file(file.c_str(), gguf_init_params{true, &tensors});
  if (gguf == nullptr) return false;
  functions_->gguf_free(gguf);
  functions_->ggml_free(tensors);
  return true;
}

std::string default_ggml_library() {
  const char* from_environment = std::getenv("GGUFCHECK_GGML_LIB");
  return from_environment != nullptr && *from_environment != '\0' ? from_environment
                                                                  : GGUFCHECK_BENCH_GGML_LIB;
}

int ggml_load_main(const std::string& library_path, const std::string& file) {
  try {
    const GgmlReader reader(library_path);
    return reader.load(file) ? 0 : 1;
  } catch (const BenchError& e) {
    std::fprintf(stderr, "ggufcheck_bench: %s\n", e.what());
    return 2;
  }
}

}  // namespace ggufcheck::bench
