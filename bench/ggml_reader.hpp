// ggml's own GGUF reader, from llama.cpp's prebuilt libggml-base.so, loaded at run time
// (validator/testkit/ggml_abi.hpp).
#pragma once

#include <memory>
#include <string>

namespace ggufcheck::testing::ggml {
class Library;
}

namespace ggufcheck::bench {

class GgmlReader {
 public:
  // Throws BenchError, with the reason, when the library or one of its functions is missing.
  explicit GgmlReader(const std::string& library_path);
  ~GgmlReader();
  GgmlReader(const GgmlReader&) = delete;
  GgmlReader& operator=(const GgmlReader&) = delete;

  // Reads the file's metadata and tensor infos as llama.cpp's loader does, then frees them.
  // True when ggml accepted the file.
  [[nodiscard]] bool load(const std::string& file) const;

 private:
  std::unique_ptr<const testing::ggml::Library> library_;
};

// The default library: GGUFCHECK_GGML_LIB from the environment, else the one setup.sh fetches.
[[nodiscard]] std::string default_ggml_library();

// `--ggml-load FILE`: the reader in a process of its own. Exit 0 accepted, 1 rejected, 2 no ggml.
int ggml_load_main(const std::string& library_path, const std::string& file);

}  // namespace ggufcheck::bench
