// libcurl, loaded the first time a URL is read (dlopen of libcurl.so.4), not linked: linked, it
// made every run of the command load the 30 libraries libcurl depends on (TLS, Kerberos, LDAP,
// SSH, ...), a few milliseconds of start-up for each file a CI gate checks, URL or not.
#pragma once

#include <curl/curl.h>

#include <string>

namespace ggufcheck::detail {

// The functions of libcurl that client.cpp calls, from the loaded library.
struct CurlLibrary {
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The library, loaded and initialised (curl_global_init) once per process, on the first call;
// nullptr when it cannot be loaded, with the reason in `error` (the same on every later call).
const CurlLibrary* curl_library(std::string& error);

}  // namespace ggufcheck::detail
