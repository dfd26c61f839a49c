#include "ggml_abi.hpp"

#include <dlfcn.h>

namespace ggufcheck::testing::ggml {

namespace {

template <typename Function>
void resolve(void* handle, const char* name, const std::string& path, Function& out) {
  void* address = ::dlsym(handle, name);
  if (address == nullptr) throw LoadError(path + " has no function " + name);
  out = reinterpret_cast<Function>(address);
}

}  // namespace

void Library::Closer::operator()(void* handle) const {
  ::dlclose(handle);
}

Library::Library(const std::string& path) : handle_(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
  if (!handle_) {
    const char* why = ::dlerror();
    throw LoadError("cannot load " + path + ": " + (why != nullptr ? why : "unknown error"));
  }
#define GGUFCHECK_GGML_RESOLVE(name, result, parameters) \
  resolve(handle_.get(), #name, path, api_.name);
  GGUFCHECK_GGML_FUNCTIONS(GGUFCHECK_GGML_RESOLVE)
#undef GGUFCHECK_GGML_RESOLVE
}

Loaded::Loaded(const Api& api, const char* path) : api_(api) {
  gguf_ = api_.gguf_init_from_file(path, gguf_init_params{true, &tensors_});
}

Loaded::~Loaded() {
  if (gguf_ == nullptr) return;
  api_.gguf_free(gguf_);
  if (tensors_ != nullptr) api_.ggml_free(tensors_);
}

}  // namespace ggufcheck::testing::ggml
