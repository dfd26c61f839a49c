// ggufcheck_data_generate: writes one model of the data-scan benchmark.
//   ggufcheck_data_generate --model float|mixed --mib N OUT.gguf
//   ggufcheck_data_generate --version
// The header comes from the project's writer (tensor infos with explicit offsets, no data); the
// tensor bytes are streamed after it in 4 MiB chunks, so memory stays small whatever N is. Every
// value is finite and no tensor is all zeros: random floats of a weight's magnitude, quant
// blocks with random finite scales and random payload bytes. OUT.info (models.hpp) is written
// last, after OUT is complete, so a present sidecar means a complete model.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"
#include "models.hpp"

namespace fs = std::filesystem;
using namespace ggufcheck;
using namespace ggufcheck::bench::data;

namespace {

constexpr std::uint64_t kChunkBytes = 4ULL << 20;

// splitmix64: fast, and a fixed seed makes every model the same bytes on every run.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

// A weight-sized f32 (|x| in [2^-17, 2^-1)): random sign and mantissa, exponent 110..125.
std::uint32_t weight_f32(std::uint64_t r) {
  const auto sign = static_cast<std::uint32_t>(r >> 63) << 31;
  const auto exponent = static_cast<std::uint32_t>(110 + ((r >> 23) & 15)) << 23;
  return sign | exponent | static_cast<std::uint32_t>(r & 0x7FFFFF);
}
// A weight-sized f16 (|x| in [2^-9, 2^-1)), exponent field 6..13.
std::uint16_t weight_f16(std::uint64_t r) {
  const std::uint64_t sign = (r >> 15 & 1) << 15;
  const std::uint64_t exponent = (6 + (r >> 10 & 7)) << 10;
  return static_cast<std::uint16_t>(sign | exponent | (r & 0x3FF));
}
// A weight-sized bf16 (the top half of weight_f32's range), exponent field 110..125.
std::uint16_t weight_bf16(std::uint64_t r) {
  const std::uint64_t sign = (r >> 15 & 1) << 15;
  const std::uint64_t exponent = (110 + (r >> 7 & 15)) << 7;
  return static_cast<std::uint16_t>(sign | exponent | (r & 0x7F));
}
// A positive f16 scale of a quant block (d, dmin), in [2^-9, 2^-1).
std::uint16_t scale_f16(std::uint64_t r) {
  return static_cast<std::uint16_t>(weight_f16(r) & 0x7FFF);
}

void put16(std::uint8_t* at, std::uint16_t v) {
  std::memcpy(at, &v, sizeof v);
}

// Fills `bytes` (whole blocks of `type`) with valid random data.
void fill(std::uint32_t type, std::uint8_t* bytes, std::uint64_t size, Random& random) {
  const std::string_view name = tensor_type(type)->name;
  if (name == "F32") {
    for (std::uint64_t i = 0; i + 4 <= size; i += 4) {
      const std::uint32_t v = weight_f32(random.next());
      std::memcpy(bytes + i, &v, 4);
    }
    return;
  }
  if (name == "F16" || name == "BF16") {
    // Four elements from each random word (16 bits of entropy each is plenty here).
    const bool f16 = name == "F16";
    for (std::uint64_t i = 0; i + 8 <= size; i += 8) {
      std::uint64_t r = random.next();
      for (int k = 0; k < 4; ++k, r = (r >> 16) | (r << 48)) {
        put16(bytes + i + 2 * static_cast<std::uint64_t>(k), f16 ? weight_f16(r) : weight_bf16(r));
      }
    }
    return;
  }
  // Quant blocks: random payload, then each block's scales written finite.
  for (std::uint64_t i = 0; i + 8 <= size; i += 8) {
    const std::uint64_t r = random.next();
    std::memcpy(bytes + i, &r, 8);
  }
  for (std::uint64_t i = size & ~7ULL; i < size; ++i)
    bytes[i] = static_cast<std::uint8_t>(random.next());
  const std::uint32_t block = tensor_type(type)->type_size;
  for (std::uint64_t at = 0; at + block <= size; at += block) {
    std::uint8_t* b = bytes + at;
    const std::uint64_t r = random.next();
    if (name == "Q8_0" || name == "IQ4_XS") {
      put16(b, scale_f16(r));  // d first
    } else if (name == "Q4_K" || name == "Q5_K") {
      put16(b, scale_f16(r));  // d, then dmin
      put16(b + 2, scale_f16(r >> 16));
    } else if (name == "Q6_K") {
      put16(b + block - 2, scale_f16(r));  // d last, after ql, qh and scales
    } else if (name == "MXFP4") {
      b[0] = static_cast<std::uint8_t>(119 + (r & 7));  // E8M0 2^-8..2^-1; 0xFF would be NaN
    } else {
      throw std::logic_error("no generator for type " + std::string(name));
    }
  }
}

Document header_document(const ModelPlan& plan) {
  Document doc;
  const auto str = [&](std::string key, std::string value) {
    doc.metadata.push_back({std::move(key), Value::string(std::move(value)), std::nullopt});
  };
  const auto u32 = [&](std::string key, std::uint32_t value) {
    doc.metadata.push_back({std::move(key), Value::u32(value), std::nullopt});
  };
  str("general.architecture", "llama");
  str("general.name", std::string("ggufcheck data-scan benchmark, ") + kind_name(plan.kind));
  u32("llama.block_count", plan.layers);
  u32("llama.context_length", 4096);
  u32("llama.embedding_length", plan.embedding);
  u32("llama.feed_forward_length", plan.feed_forward);
  u32("llama.attention.head_count", plan.embedding / 128);
  u32("llama.attention.head_count_kv", plan.kv_width / 128);
  u32("llama.rope.dimension_count", 128);
  doc.metadata.push_back(
      {"llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5F), std::nullopt});
  if (plan.kind == ModelKind::Mixed) u32("general.quantization_version", 2);
  std::uint64_t offset = 0;
  for (const TensorPlan& t : plan.tensors) {
    Tensor tensor;
    tensor.name = t.name;
    tensor.dims = t.dims;
    tensor.type = t.type;
    tensor.offset = offset;
    tensor.data = std::vector<std::uint8_t>{};  // streamed after the header
    doc.tensors.push_back(std::move(tensor));
    offset += (t.nbytes + kDefaultAlignment - 1) / kDefaultAlignment * kDefaultAlignment;
  }
  return doc;
}

class File {
 public:
  explicit File(const std::string& path) : file_(std::fopen(path.c_str(), "wb")) {}
  ~File() {
    if (file_ != nullptr) std::fclose(file_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  [[nodiscard]] bool is_open() const { return file_ != nullptr; }
  bool write(const std::uint8_t* bytes, std::uint64_t size) {
    written_ += size;
    return std::fwrite(bytes, 1, size, file_) == size;
  }
  bool close() {
    const bool ok = std::fclose(file_) == 0;
    file_ = nullptr;
    return ok;
  }
  [[nodiscard]] std::uint64_t written() const { return written_; }

 private:
  std::FILE* file_;
  std::uint64_t written_ = 0;
};

int usage() {
  std::fprintf(stderr,
               "usage: ggufcheck_data_generate --model float|mixed --mib N OUT.gguf\n"
               "       ggufcheck_data_generate --version\n");
  return 2;
}

int generate(ModelKind kind, std::uint64_t mib, const std::string& out_path) {
  const ModelPlan plan = plan_model(kind, mib << 20);
  WriteOptions options;
  options.pad_after_last_tensor = false;  // the header only: the data follows below
  const Written header = write(header_document(plan), options);
  if (header.layout.data_start != header.bytes.size()) {
    std::fprintf(stderr, "the writer's header does not end at the data section\n");
    return 1;
  }

  std::error_code error;
  fs::create_directories(
      fs::path(out_path).parent_path().empty() ? fs::path(".") : fs::path(out_path).parent_path(),
      error);
  fs::remove(sidecar_path(out_path), error);
  const std::string partial = out_path + ".partial";
  File out(partial);
  if (!out.is_open() || !out.write(header.bytes.data(), header.bytes.size())) {
    std::fprintf(stderr, "cannot write %s: %s\n", partial.c_str(), std::strerror(errno));
    return 1;
  }
  Random random(kind == ModelKind::Float ? 0x6767756663686B01ULL : 0x6767756663686B02ULL);
  std::vector<std::uint8_t> chunk(kChunkBytes);
  const std::vector<std::uint8_t> padding(kDefaultAlignment, 0);
  for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorPlan& t = plan.tensors[i];
    const std::uint32_t block = tensor_type(t.type)->type_size;
    const std::uint64_t chunk_size = kChunkBytes / block * block;  // whole blocks
    for (std::uint64_t done = 0; done < t.nbytes;) {
      const std::uint64_t size = std::min(chunk_size, t.nbytes - done);
      fill(t.type, chunk.data(), size, random);
      if (!out.write(chunk.data(), size)) {
        std::fprintf(stderr, "cannot write %s: %s\n", partial.c_str(), std::strerror(errno));
        return 1;
      }
      done += size;
    }
    const std::uint64_t pad =
        (kDefaultAlignment - t.nbytes % kDefaultAlignment) % kDefaultAlignment;
    if (i + 1 < plan.tensors.size() && !out.write(padding.data(), pad)) return 1;
  }
  const std::uint64_t file_size = out.written();
  if (!out.close()) {
    std::fprintf(stderr, "cannot write %s: %s\n", partial.c_str(), std::strerror(errno));
    return 1;
  }
  fs::rename(partial, out_path, error);
  if (error) {
    std::fprintf(stderr, "cannot rename %s: %s\n", partial.c_str(), error.message().c_str());
    return 1;
  }
  Sidecar sidecar{kGeneratorVersion, kind_name(kind),    mib, file_size, header.bytes.size(),
                  plan.data_bytes(), plan.tensors.size()};
  if (!write_sidecar(out_path, sidecar)) {
    std::fprintf(stderr, "cannot write %s\n", sidecar_path(out_path).c_str());
    return 1;
  }
  std::printf("%s: %s model, %u layers, %zu tensors, %.1f MiB of tensor data\n", out_path.c_str(),
              kind_name(kind), plan.layers, plan.tensors.size(),
              static_cast<double>(plan.data_bytes()) / (1 << 20));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--version") {
    std::printf("%d\n", kGeneratorVersion);
    return 0;
  }
  std::optional<ModelKind> kind;
  std::uint64_t mib = 0;
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--model" && i + 1 < args.size()) {
      kind = parse_kind(args[++i]);
      if (!kind) return usage();
    } else if (args[i] == "--mib" && i + 1 < args.size()) {
      mib = std::stoull(args[++i]);
    } else if (out.empty() && !args[i].starts_with("-")) {
      out = args[i];
    } else {
      return usage();
    }
  }
  if (!kind || mib == 0 || mib > (1ULL << 20) || out.empty()) return usage();
  try {
    return generate(*kind, mib, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufcheck_data_generate: %s\n", e.what());
    return 1;
  }
}
