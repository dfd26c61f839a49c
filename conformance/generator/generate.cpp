// Writes the conformance suite: DIR/cases/<id>.gguf for every case, DIR/expected/<id>.json (the
// canonical output, `ggufcheck dump --level 3`) for every case a profile accepts, and
// DIR/manifest.json, which also gives the non-zero extents of the cases too big to commit
// (conformance/run writes those as sparse files).
// Usage: ggufcheck_make_conformance DIR [--real MODELS_DIR]
// The output is the same bytes on every run; conformance/ in the repository holds it, and the
// ctest conformance_cases_are_reproducible checks that it still does. With --real, the pinned
// hashes of the fetched real files (and of their canonical outputs) are checked against the
// files in MODELS_DIR; without it they are written from the table in cases.cpp.
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cases.hpp"
#include "ggufcheck/dump.hpp"
#include "ggufcheck/writer.hpp"
#include "sha256.hpp"

namespace fs = std::filesystem;
using ggufcheck::conformance::Case;
using ggufcheck::conformance::RealCase;
using ggufcheck::conformance::SparseCase;
using ggufcheck::conformance::Verdict;
using Json = nlohmann::ordered_json;

namespace {

constexpr const char* kSuiteVersion = "1.0";

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Accept: return "accept";
    case Verdict::Reject: return "reject";
    case Verdict::Either: return "either";
  }
  return "?";
}

// The version field as written, and the byte order a reader that detects byte-swapped files
// (a version whose low 16 bits are 0) would take; null when the file has no version field.
void describe_header(const std::vector<std::uint8_t>& bytes, Json& entry) {
  if (bytes.size() < 8) {
    entry["gguf_version"] = nullptr;
    entry["endianness"] = "little";
    return;
  }
  std::uint32_t version = 0;
  for (std::size_t i = 0; i < 4; ++i) version |= std::uint32_t{bytes[4 + i]} << (8 * i);
  const std::uint32_t swapped = __builtin_bswap32(version);
  const bool big = (version & 0xFFFFu) == 0 && swapped != 0 && swapped <= 3;
  entry["gguf_version"] = std::to_string(big ? swapped : version);
  entry["endianness"] = big ? "big" : "little";
}

std::optional<ggufcheck::Profile> accepting_profile(Verdict spec, Verdict llama_cpp) {
  if (spec == Verdict::Accept) return ggufcheck::Profile::Spec;
  if (llama_cpp == Verdict::Accept) return ggufcheck::Profile::LlamaCpp;
  return std::nullopt;
}

bool write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

std::string sha256_of(const std::string& text) {
  return ggufcheck::corpus::sha256_hex(std::vector<std::uint8_t>(text.begin(), text.end()));
}

// Writes DIR/expected/<id>.json, the dump of a case by the profile declared to accept it, and
// records it in the case's entry. A rejection is counted in `problems`: the declaration comes
// from the format docs, so ggufcheck disagreeing is a bug in one of the two, and the suite cannot
// have a canonical output until it is settled. False when the file cannot be written.
bool record_canonical(const fs::path& dir, const std::string& id, ggufcheck::Profile profile,
                      const ggufcheck::Dump& dump, Json& entry, int& problems) {
  if (dump.exit_status != 0) {
    std::fprintf(stderr, "%s: declared accepted in the %s profile, but ggufcheck rejects it: %s",
                 id.c_str(), std::string(ggufcheck::to_string(profile)).c_str(), dump.json.c_str());
    ++problems;
    return true;
  }
  const std::string canonical = "expected/" + id + ".json";
  if (!write_text(dir / canonical, dump.json)) {
    std::fprintf(stderr, "cannot write %s\n", (dir / canonical).c_str());
    return false;
  }
  entry["canonical"] = canonical;
  entry["canonical_sha256"] = sha256_of(dump.json);
  return true;
}

std::string hex_of(const std::vector<std::uint8_t>& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const std::uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// Calls visit(pointer, length) on the sparse case's bytes in order, zeros in chunks of 1 MiB.
template <typename Visit>
void for_each_chunk(const SparseCase& s, Visit visit) {
  static const std::vector<std::uint8_t> zeros(std::size_t{1} << 20);
  std::uint64_t at = 0;
  const auto zero_until = [&](std::uint64_t end) {
    while (at < end) {
      const std::uint64_t n = std::min<std::uint64_t>(end - at, zeros.size());
      visit(zeros.data(), static_cast<std::size_t>(n));
      at += n;
    }
  };
  for (const SparseCase::Extent& e : s.extents) {
    zero_until(e.offset);
    visit(e.bytes.data(), e.bytes.size());
    at += e.bytes.size();
  }
  zero_until(s.size);
}

std::string sha256_of_sparse(const SparseCase& s) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("EVP_DigestInit_ex(sha256) failed");
  }
  for_each_chunk(s, [&](const std::uint8_t* p, std::size_t n) {
    if (EVP_DigestUpdate(ctx.get(), p, n) != 1) throw std::runtime_error("EVP_DigestUpdate failed");
  });
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1) {
    throw std::runtime_error("EVP_DigestFinal_ex failed");
  }
  return hex_of(std::vector<std::uint8_t>(digest, digest + length));
}

// Writes the case as a sparse file (the extents, then the size): holes read as zeros.
bool write_sparse(const fs::path& path, const SparseCase& s) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const SparseCase::Extent& e : s.extents) {
    out.seekp(static_cast<std::streamoff>(e.offset));
    out.write(reinterpret_cast<const char*>(e.bytes.data()),
              static_cast<std::streamsize>(e.bytes.size()));
  }
  out.close();
  if (!out) return false;
  std::error_code error;
  fs::resize_file(path, s.size, error);
  return !error;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--real")) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR [--real MODELS_DIR]\n", argv[0]);
    return 3;
  }
  try {
    const fs::path dir = argv[1];
    fs::create_directories(dir / "cases");
    fs::create_directories(dir / "expected");
    int problems = 0;
    Json entries = Json::array();
    for (const Case& c : ggufcheck::conformance::cases()) {
      const std::vector<std::uint8_t> bytes = c.build();
      const std::string file = "cases/" + c.file_name();
      if (!ggufcheck::save_file(dir / file, bytes)) {
        std::fprintf(stderr, "cannot write %s\n", (dir / file).c_str());
        return 1;
      }
      // A split case's other shards, beside the first under the names llama.cpp derives.
      Json shards = Json::array();
      if (c.split_count != 0) {
        const std::vector<std::vector<std::uint8_t>> rest = c.build_shards();
        for (std::uint32_t k = 0; k < rest.size(); ++k) {
          if (rest[k].empty()) continue;  // a missing shard
          const std::string shard = "cases/" + c.shard_name(k + 2);
          if (!ggufcheck::save_file(dir / shard, rest[k])) {
            std::fprintf(stderr, "cannot write %s\n", (dir / shard).c_str());
            return 1;
          }
          shards.push_back({{"file", shard},
                            {"sha256", ggufcheck::corpus::sha256_hex(rest[k])},
                            {"size", rest[k].size()}});
        }
      }
      Json entry;
      entry["id"] = c.id;
      entry["file"] = file;
      entry["fetched"] = false;
      entry["sha256"] = ggufcheck::corpus::sha256_hex(bytes);
      entry["size"] = bytes.size();
      entry["expected"] = {{"spec", to_string(c.spec)}, {"llama.cpp", to_string(c.llama_cpp)}};
      entry["area"] = c.area();
      entry["rule"] = c.rule;
      entry["error_class"] = c.error_class.empty() ? Json(nullptr) : Json(c.error_class);
      entry["level"] = c.recommended ? "recommended" : "required";
      entry["tags"] = c.tags;
      entry["since"] = kSuiteVersion;
      describe_header(bytes, entry);
      entry["canonical"] = nullptr;
      entry["canonical_sha256"] = nullptr;
      if (c.data) {
        // The third verdict, llama.cpp's tensor data check (conformance/README.md, "Data cases").
        entry["data"] = {{"verdict", to_string(c.data->verdict)},
                         {"tensor", c.data->tensor.empty() ? Json(nullptr) : Json(c.data->tensor)},
                         {"rule", c.data->rule},
                         {"error_class",
                          c.data->error_class.empty() ? Json(nullptr) : Json(c.data->error_class)}};
      }
      if (c.model) {
        // The fourth verdict, llama.cpp's model loader (conformance/README.md, "Model cases").
        entry["model"] = {
            {"verdict", to_string(c.model->verdict)},
            {"rule", c.model->rule},
            {"error_class",
             c.model->error_class.empty() ? Json(nullptr) : Json(c.model->error_class)}};
      }
      if (c.split_count != 0) entry["shards"] = std::move(shards);
      if (const auto profile = accepting_profile(c.spec, c.llama_cpp)) {
        ggufcheck::Options options;
        options.profile = *profile;
        const ggufcheck::Dump dump = ggufcheck::dump(ggufcheck::Bytes(bytes.data(), bytes.size()),
                                                     options, ggufcheck::DumpLevel::Data);
        if (!record_canonical(dir, c.id, *profile, dump, entry, problems)) return 1;
      }
      entries.push_back(std::move(entry));
    }
    for (const RealCase& r : ggufcheck::conformance::real_cases()) {
      if (argc == 4) {
        const fs::path path = fs::path(argv[3]) / r.file;
        ggufcheck::Options options;
        options.profile = ggufcheck::Profile::LlamaCpp;
        const ggufcheck::Dump dump =
            ggufcheck::dump_file(path.string(), options, ggufcheck::DumpLevel::Data);
        if (dump.exit_status != 0 || sha256_of(dump.json) != r.canonical_sha256) {
          std::fprintf(stderr, "%s: the canonical output of %s is not the pinned one\n",
                       r.id.c_str(), path.c_str());
          ++problems;
        }
      }
      Json entry;
      entry["id"] = r.id;
      entry["file"] = "{deps}/llama.cpp/models/" + r.file;
      entry["fetched"] = true;
      entry["sha256"] = r.sha256;
      entry["size"] = r.size;
      entry["expected"] = {{"spec", to_string(r.spec)}, {"llama.cpp", to_string(r.llama_cpp)}};
      entry["area"] = "real";
      entry["rule"] = r.rule;
      entry["error_class"] = r.error_class.empty() ? Json(nullptr) : Json(r.error_class);
      entry["level"] = "required";
      entry["tags"] = Json::array({"big"});
      entry["since"] = kSuiteVersion;
      entry["gguf_version"] = r.gguf_version;
      entry["endianness"] = "little";
      entry["canonical"] = nullptr;
      entry["canonical_sha256"] = r.canonical_sha256;
      entries.push_back(std::move(entry));
    }
    for (const SparseCase& s : ggufcheck::conformance::sparse_cases()) {
      Json entry;
      entry["id"] = s.id;
      entry["file"] = "{deps}/generated/" + s.id + ".gguf";
      entry["fetched"] = false;
      entry["sha256"] = sha256_of_sparse(s);
      entry["size"] = s.size;
      Json extents = Json::array();
      for (const SparseCase::Extent& e : s.extents) {
        extents.push_back({{"offset", e.offset}, {"hex", hex_of(e.bytes)}});
      }
      entry["sparse"] = {{"extents", std::move(extents)}};
      entry["expected"] = {{"spec", to_string(s.spec)}, {"llama.cpp", to_string(s.llama_cpp)}};
      entry["area"] = s.id.substr(2, s.id.find('_', 2) - 2);
      entry["rule"] = s.rule;
      entry["error_class"] = s.error_class.empty() ? Json(nullptr) : Json(s.error_class);
      entry["level"] = "required";
      entry["tags"] = s.tags;
      entry["since"] = kSuiteVersion;
      describe_header(s.extents.front().bytes, entry);
      entry["canonical"] = nullptr;
      entry["canonical_sha256"] = nullptr;
      if (const auto profile = accepting_profile(s.spec, s.llama_cpp)) {
        // The canonical output from the file itself, written sparse to a temporary path.
        const fs::path temporary =
            fs::temp_directory_path() / ("ggufcheck-conformance-" + s.id + "-" +
                                         std::to_string(static_cast<long>(::getpid())) + ".gguf");
        if (!write_sparse(temporary, s)) {
          std::fprintf(stderr, "cannot write %s\n", temporary.c_str());
          return 1;
        }
        ggufcheck::Options options;
        options.profile = *profile;
        const ggufcheck::Dump dump =
            ggufcheck::dump_file(temporary.string(), options, ggufcheck::DumpLevel::Data);
        std::error_code ignored;
        fs::remove(temporary, ignored);
        if (!record_canonical(dir, s.id, *profile, dump, entry, problems)) return 1;
      }
      entries.push_back(std::move(entry));
    }
    Json manifest;
    manifest["suite"] = "gguf-conformance";
    manifest["suite_version"] = kSuiteVersion;
    manifest["profiles"] = Json::array({"spec", "llama.cpp"});
    manifest["cases"] = std::move(entries);
    if (!write_text(dir / "manifest.json", manifest.dump(1) + '\n')) {
      std::fprintf(stderr, "cannot write %s\n", (dir / "manifest.json").c_str());
      return 1;
    }
    if (problems != 0) {
      std::fprintf(stderr, "ggufcheck_make_conformance: %d problem(s)\n", problems);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufcheck_make_conformance: %s\n", e.what());
    return 1;
  }
  return 0;
}
