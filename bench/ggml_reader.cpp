#include "ggml_reader.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "fixtures.hpp"
#include "ggml_abi.hpp"

namespace ggufcheck::bench {

namespace ggml = testing::ggml;

GgmlReader::GgmlReader(const std::string& library_path) {
  try {
    library_ = std::make_unique<const ggml::Library>(library_path);
  } catch (const ggml::LoadError& e) {
    throw BenchError(fmt::format(
        "ggml's reader: {} (run scripts/setup.sh, or set GGUFCHECK_GGML_LIB or --ggml-lib)",
        e.what()));
  }
}

GgmlReader::~GgmlReader() = default;

bool GgmlReader::load(const std::string& file) const {
  const ggml::Loaded loaded(library_->api(), file.c_str());
  return loaded.gguf() != nullptr;
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
