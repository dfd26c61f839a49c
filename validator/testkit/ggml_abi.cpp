#include "ggml_abi.hpp"

#include <dlfcn.h>

namespace ggufcheck::testing::ggml {

void SharedObject::Closer::operator()(void* handle) const {
  ::dlclose(handle);
}

SharedObject::SharedObject(const std::string& path)
    : path_(path), handle_(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
  if (!handle_) {
    const char* why = ::dlerror();
    throw LoadError("cannot load " + path + ": " + (why != nullptr ? why : "unknown error"));
  }
}

void* SharedObject::symbol(const char* name) const {
  void* address = ::dlsym(handle_.get(), name);
  if (address == nullptr) throw LoadError(path_ + " has no function " + name);
  return address;
}

Library::Library(const std::string& path) : library_(path) {
  const SharedObject& library = library_;
  Api& table = api_;
  GGUFCHECK_GGML_FUNCTIONS(GGUFCHECK_ABI_RESOLVE)
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
