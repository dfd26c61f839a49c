#include "remote/curl_library.hpp"

#include <dlfcn.h>

namespace ggufcheck::detail {
namespace {

// The soname of Debian's libcurl4 (the OpenSSL build the headers of libcurl4-openssl-dev are for).
constexpr const char* kSoname = "libcurl.so.4";

struct Loaded {
  CurlLibrary functions{};
  std::string error;  // empty when loaded
};

template <typename F>
bool resolve(void* library, const char* name, F& out, std::string& error) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) {
    error = std::string(kSoname) + " has no " + name;
    return false;
  }
  out = reinterpret_cast<F>(symbol);
  return true;
}

Loaded load() {
  Loaded loaded;
  // Never unloaded: its handles and global state live until the process ends.
  void* library = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.error = std::string("cannot load ") + kSoname +
                   " (remote files need libcurl): " + (why != nullptr ? why : "unknown error");
    return loaded;
  }
  CurlLibrary& f = loaded.functions;
  CURLcode (*global_init)(long) = nullptr;
  std::string& error = loaded.error;
  if (!resolve(library, "curl_global_init", global_init, error) ||
      !resolve(library, "curl_easy_init", f.easy_init, error) ||
      !resolve(library, "curl_easy_cleanup", f.easy_cleanup, error) ||
      !resolve(library, "curl_easy_setopt", f.easy_setopt, error) ||
      !resolve(library, "curl_easy_perform", f.easy_perform, error) ||
      !resolve(library, "curl_easy_getinfo", f.easy_getinfo, error) ||
      !resolve(library, "curl_easy_strerror", f.easy_strerror, error) ||
      !resolve(library, "curl_slist_append", f.slist_append, error) ||
      !resolve(library, "curl_slist_free_all", f.slist_free_all, error)) {
    return loaded;
  }
  if (const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    error = std::string("libcurl could not be initialised: ") + f.easy_strerror(rc);
  }
  return loaded;
}

}  // namespace

const CurlLibrary* curl_library(std::string& error) {
  static const Loaded loaded = load();  // thread-safe, once
  if (!loaded.error.empty()) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.functions;
}

}  // namespace ggufcheck::detail
