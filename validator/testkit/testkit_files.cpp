// `ggufcheck_testkit_files DIR`: writes the example file of every catalogue code (the code
// table, code_table.hpp) to DIR/<catalogue name>.gguf and prints "<file name> <code>" for each,
// so that a test in another language validates the same bytes as the C++ tests and the corpus.
// The examples that are split sets (several files) are left out.
// The line of an example that needs the data check ends in " --data": validate it with that; one
// checked against a base model, in " --base PATH" (PATH from the repository's root).
#include <cstdio>
#include <filesystem>
#include <string>

#include "code_table.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  for (const ggufcheck::testing::CodeEntry& entry : ggufcheck::testing::code_table()) {
    const ggufcheck::testing::CodeExample& e = entry.example;
    // A split set's example is several files checked together, not one file per run.
    if (e.build == nullptr) continue;
    const std::string name = std::string(ggufcheck::catalogue_entry(entry.code).name) + ".gguf";
    if (!ggufcheck::save_file(dir / name, e.build().bytes)) {
      std::fprintf(stderr, "%s: cannot write %s\n", argv[0], (dir / name).c_str());
      return 1;
    }
    std::printf("%s %s%s%s%s\n", name.c_str(), ggufcheck::code_string(entry.code).c_str(),
                e.data ? " --data" : "", e.base.empty() ? "" : " --base ",
                std::string(e.base).c_str());
  }
  return 0;
}
