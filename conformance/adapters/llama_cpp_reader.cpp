// The conformance adapter of llama.cpp's GGUF reader: `llama_cpp_reader FILE` loads FILE as
// llama.cpp's model loader does (ggml's gguf_init_from_file with no_alloc and a ggml context,
// then the loader's check that every tensor's data lies inside the file) and prints the
// canonical JSON of docs/dump.md from what the reader returns, through its C API only. Exit 0
// accepted, 1 rejected ({"ok": false, "error": ...}); a crash of the reader is a crash.
//
// The library is the prebuilt libggml-base.so of scripts/setup.sh (GGUFCHECK_REFERENCE_GGML_LIB
// or --library PATH selects another), loaded with dlopen through the declarations of
// validator/testkit/ggml_abi.hpp: it is not built here.
//
// `llama_cpp_reader --data FILE` is llama.cpp's tensor data check (`--check-tensors`): the file
// loaded as above, then each tensor's bytes (ggml_nbytes of them, at data_offset + its offset)
// read from the file and given to ggml_validate_row_data. {"ok": true} (exit 0) when every tensor
// validates, else {"ok": false, "error": ..., "tensor": NAME} (exit 1) with the first tensor in
// file order that fails (llama.cpp checks them all and fails the load). A file the reader
// rejects is a rejection too, with no tensor.
//
// `llama_cpp_reader --model FILE` is llama.cpp's model loader: llama_model_load_from_file(FILE)
// with llama_model_default_params(), no_alloc (no tensor data read), LLAMA_LOAD_MODE_NONE, and
// vocab_only when the file has no tensor, as the test kit's LlamaLoaderReference runs it (libllama
// of the same package, in a forked child, the CPU backends loaded from its directory first). The
// first shard of a split set <prefix>-00001-of-0000N.gguf brings the other shards of its
// directory by name, as llama.cpp does. {"ok": true} (exit 0) when a model comes back;
// {"ok": false, "error": the reason llama.cpp logged} (exit 1) when it refuses the file; a load
// that aborts (a GGML_ASSERT, SIGABRT) is a rejection too, {"ok": false, "error": "llama.cpp
// aborted: <the assertion>"} (exit 1). Any other death of the load (another signal, the loader's
// own time limit) or a reference that cannot run exits 3, a crash to the runner.
//
// What the C API cannot say, the output cannot say either, and the suite's value comparison
// shows it: strings are returned as C strings (cut at the first NUL), a tensor's n_dims is
// ggml_n_dims (trailing dims of 1 dropped), and the file's byte order is always little.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ggml_abi.hpp"
#include "llama_loader_reference.hpp"

namespace {

using Json = nlohmann::ordered_json;

namespace ggml = ggufcheck::testing::ggml;

// gguf_type ids are GGUF's value type ids.
const char* kTypeNames[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                            "bool",  "string", "array",  "uint64", "int64",  "float64"};
constexpr std::size_t kScalarSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const std::uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minimum[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

std::string hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : s) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

template <typename Float>
std::string float_text(Float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buffer[64];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

// A scalar at p of GGUF type `type`, as the canonical string (bools: "true"/"false"; a byte
// other than 0/1 also gives "raw").
Json scalar(int type, const void* p, std::string* raw) {
  std::uint64_t u = 0;
  std::memcpy(&u, p, kScalarSizes[type]);
  switch (type) {
    case 1: return std::to_string(static_cast<std::int8_t>(u));
    case 3: return std::to_string(static_cast<std::int16_t>(u));
    case 5: return std::to_string(static_cast<std::int32_t>(u));
    case 11: return std::to_string(static_cast<std::int64_t>(u));
    case 6: return float_text(std::bit_cast<float>(static_cast<std::uint32_t>(u)));
    case 12: return float_text(std::bit_cast<double>(u));
    case 7:
      if (u > 1 && raw != nullptr) *raw = std::to_string(u);
      return u != 0 ? "true" : "false";
    default: return std::to_string(u);
  }
}

void put_text(Json& out, const std::string& name, std::string_view text) {
  if (valid_utf8(text)) {
    out[name] = std::string(text);
  } else {
    out[name + "_bytes_hex"] = hex(text);
  }
}

void quiet(int, const char*, void*) {}

int reject(const std::string& why) {
  std::printf("%s\n", Json{{"ok", false}, {"error", why}}.dump(-1, ' ', true).c_str());
  return 1;
}

// ggml_validate_row_data with what it prints on stderr (fprintf in this build: "found nan value
// at block 1") captured, for the rejection's message; the lines are passed on to stderr too.
bool validate(const ggml::Api& api, int type, const void* bytes, std::size_t nbytes,
              std::string& said) {
  said.clear();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> capture(std::tmpfile(), std::fclose);
  std::fflush(stderr);
  const int saved = capture ? ::dup(2) : -1;
  if (saved >= 0) ::dup2(::fileno(capture.get()), 2);
  const bool valid = api.ggml_validate_row_data(type, bytes, nbytes);
  if (saved < 0) return valid;
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(capture.get());
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, capture.get()) != nullptr) {
    std::fputs(buffer, stderr);
    std::string line(buffer);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) said = line;
  }
  return valid;
}

// The data check of a file the reader accepted (bounds already checked): every tensor's bytes
// through ggml_validate_row_data, in file order, read one tensor at a time.
int check_data(const ggml::Api& api, const ggml::gguf_context* ctx, const char* path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path, "rb"), std::fclose);
  if (!file) return reject("cannot open the file");
  const std::int64_t n_tensors = api.gguf_get_n_tensors(ctx);
  const std::uint64_t data_offset = api.gguf_get_data_offset(ctx);
  std::vector<unsigned char> bytes;
  std::string said;
  for (std::int64_t i = 0; i < n_tensors; ++i) {
    const std::uint64_t offset = data_offset + api.gguf_get_tensor_offset(ctx, i);
    const std::size_t nbytes = api.gguf_get_tensor_size(ctx, i);
    try {
      bytes.resize(std::max<std::size_t>(nbytes, 1));
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "llama_cpp_reader: out of memory for %zu bytes of tensor data\n",
                   nbytes);
      return 3;
    }
    if (offset > static_cast<std::uint64_t>(INT64_MAX) ||
        std::fseek(file.get(), static_cast<long>(offset), SEEK_SET) != 0 ||
        std::fread(bytes.data(), 1, nbytes, file.get()) != nbytes) {
      return reject("cannot read the data of tensor " + std::to_string(i));
    }
    if (!validate(api, api.gguf_get_tensor_type(ctx, i), bytes.data(), nbytes, said)) {
      const char* name = api.gguf_get_tensor_name(ctx, i);
      std::string why = "tensor '" + std::string(name) + "' has invalid data";
      if (!said.empty()) why += ": " + said;
      std::printf(
          "%s\n",
          Json{{"ok", false}, {"error", why}, {"tensor", name}}.dump(-1, ' ', true).c_str());
      return 1;
    }
  }
  std::printf("{\"ok\": true}\n");
  return 0;
}

// --model: llama.cpp's model loader on the file (vocab_only when it has no tensor).
int load_model(const char* path, bool vocab_only) {
  namespace testing = ggufcheck::testing;
  testing::LoaderResult result;
  try {
    testing::LlamaLoaderReference reference(testing::reference_llama_library_path());
    result = reference.load(path, vocab_only);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama_cpp_reader: llama.cpp's model loader: %s\n", e.what());
    return 3;
  }
  switch (result.outcome) {
    case testing::LoaderOutcome::Loads: std::printf("{\"ok\": true}\n"); return 0;
    case testing::LoaderOutcome::Refuses: return reject(result.message);
    case testing::LoaderOutcome::Crashes:
      if (result.signal == SIGABRT) return reject("llama.cpp aborted: " + result.message);
      break;
    default: break;
  }
  std::fprintf(stderr, "llama_cpp_reader: the load %s: %s\n", testing::to_string(result.outcome),
               result.message.c_str());
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  std::string library = GGUFCHECK_REFERENCE_GGML_LIB;
  if (const char* env = std::getenv("GGUFCHECK_REFERENCE_GGML_LIB"); env != nullptr && *env) {
    library = env;
  }
  int first = 1;
  if (argc > 2 && std::string_view(argv[1]) == "--library") {
    library = argv[2];
    first = 3;
  }
  if (argc == first + 1 && std::string_view(argv[first]) == "--capabilities") {
    std::printf("%s\n", Json{{"name", "llama.cpp"},
                             {"version", "node-llama-cpp 3.22.1 libggml-base.so"},
                             {"levels", {"L0", "L1", "L2"}},
                             {"gguf_versions", {"2", "3"}},
                             {"endianness", {"little"}},
                             {"data", true},
                             {"model", true}}
                            .dump()
                            .c_str());
    return 0;
  }
  const bool data_check = argc == first + 2 && std::string_view(argv[first]) == "--data";
  const bool model_check = argc == first + 2 && std::string_view(argv[first]) == "--model";
  if (data_check || model_check) ++first;
  if (argc != first + 1) {
    std::fprintf(stderr, "usage: %s [--library LIB] [--data|--model] FILE | --capabilities\n",
                 argv[0]);
    return 3;
  }
  std::unique_ptr<const ggml::Library> loaded_library;
  try {
    loaded_library = std::make_unique<const ggml::Library>(library);
  } catch (const ggml::LoadError& e) {
    std::fprintf(stderr, "llama_cpp_reader: %s (run scripts/setup.sh)\n", e.what());
    return 3;
  }
  const ggml::Api& api = loaded_library->api();
  api.ggml_log_set(quiet, nullptr);  // stderr is not judged, but keep it readable

  const char* path = argv[first];
  // Freed on every way out (LeakSanitizer watches the adapter in the asan build).
  const ggml::Loaded loaded(api, path);
  const ggml::gguf_context* ctx = loaded.gguf();
  if (ctx == nullptr) return reject("gguf_init_from_file returned NULL");

  struct stat st {};
  if (::stat(path, &st) != 0) return reject("cannot stat the file");
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  const std::int64_t n_tensors = api.gguf_get_n_tensors(ctx);
  const std::uint64_t data_offset = api.gguf_get_data_offset(ctx);
  // llama_model_loader's bounds check (llama_tensor_weight).
  for (std::int64_t i = 0; i < n_tensors; ++i) {
    const std::uint64_t offs = data_offset + api.gguf_get_tensor_offset(ctx, i);
    const std::uint64_t nbytes = api.gguf_get_tensor_size(ctx, i);
    if (offs + nbytes < offs || offs + nbytes > file_size) {
      return reject("tensor " + std::to_string(i) + " data is not within the file bounds");
    }
  }
  if (data_check) return check_data(api, ctx, path);
  if (model_check) return load_model(path, n_tensors == 0);

  Json out;
  out["ok"] = true;
  out["version"] = std::to_string(api.gguf_get_version(ctx));
  out["endianness"] = "little";
  out["alignment"] = std::to_string(api.gguf_get_alignment(ctx));
  out["tensor_count"] = std::to_string(n_tensors);
  const std::int64_t n_kv = api.gguf_get_n_kv(ctx);
  out["kv_count"] = std::to_string(n_kv);
  if (n_tensors > 0) out["data_offset"] = std::to_string(data_offset);
  Json metadata = Json::array();
  for (std::int64_t i = 0; i < n_kv; ++i) {
    Json entry;
    put_text(entry, "key", api.gguf_get_key(ctx, i));
    const int type = api.gguf_get_kv_type(ctx, i);
    entry["type"] = type >= 0 && type < 13 ? kTypeNames[type] : "unknown";
    if (type == 9) {
      const int element = api.gguf_get_arr_type(ctx, i);
      entry["element_type"] = element >= 0 && element < 13 ? kTypeNames[element] : "unknown";
      Json items = Json::array();
      const std::size_t n = api.gguf_get_arr_n(ctx, i);
      for (std::size_t k = 0; k < n; ++k) {
        if (element == 8) {
          const std::string_view text = api.gguf_get_arr_str(ctx, i, k);
          items.push_back(valid_utf8(text) ? Json(std::string(text))
                                           : Json{{"bytes_hex", hex(text)}});
        } else if (element >= 0 && element < 13 && kScalarSizes[element] > 0) {
          const auto* data = static_cast<const unsigned char*>(api.gguf_get_arr_data(ctx, i));
          std::string raw;
          Json value = scalar(element, data + k * kScalarSizes[element], &raw);
          items.push_back(raw.empty() ? value : Json{{"value", value}, {"raw", raw}});
        }
      }
      entry["value"] = std::move(items);
    } else if (type == 8) {
      put_text(entry, "value", api.gguf_get_val_str(ctx, i));
    } else if (type >= 0 && type < 13) {
      std::string raw;
      entry["value"] = scalar(type, api.gguf_get_val_data(ctx, i), &raw);
      if (!raw.empty()) entry["raw"] = raw;
    }
    metadata.push_back(std::move(entry));
  }
  out["metadata"] = std::move(metadata);
  Json list = Json::array();
  for (std::int64_t i = 0; i < n_tensors; ++i) {
    Json t;
    const char* name = api.gguf_get_tensor_name(ctx, i);
    put_text(t, "name", name);
    const int type = api.gguf_get_tensor_type(ctx, i);
    const char* type_name = api.ggml_type_name(type);
    // ggml's names are lower case ("q4_k"); the canonical output's are the upper-case ones.
    std::string canonical = type_name != nullptr ? type_name : "unknown";
    for (char& c : canonical) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    t["type"] = canonical;
    t["type_id"] = std::to_string(type);
    Json dims = Json::array();
    if (const ggml::ggml_tensor_prefix* tensor = api.ggml_get_tensor(loaded.tensors(), name);
        tensor != nullptr) {
      for (int d = 0; d < api.ggml_n_dims(tensor); ++d)
        dims.push_back(std::to_string(tensor->ne[d]));
    }
    t["dims"] = std::move(dims);
    t["offset"] = std::to_string(api.gguf_get_tensor_offset(ctx, i));
    list.push_back(std::move(t));
  }
  out["tensors"] = std::move(list);
  std::printf("%s\n", out.dump(-1, ' ', true).c_str());
  return 0;
}
