// The main of a fuzz target built without libFuzzer: it replays files and directories through
// LLVMFuzzerTestOneInput, so every target builds and runs under any compiler (ctest replays
// fuzz/regressions/ and the corpus this way).
//
//   fuzz_TARGET [-mutations=N] [-seed=S] FILE|DIR...
//
// With -mutations=N, a target that has a custom mutator also runs N chained mutants of every
// input (and a crossover of every input with the next), made with seeds derived from S: this
// keeps the mutator itself under the sanitizers in CI.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed)
    __attribute__((weak));
extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* data1, std::size_t size1,
                                                 const std::uint8_t* data2, std::size_t size2,
                                                 std::uint8_t* out, std::size_t max_out_size,
                                                 unsigned int seed) __attribute__((weak));

namespace {

std::mt19937 byte_mutation_engine;  // reseeded per mutant, so every run is reproducible

}  // namespace

// libFuzzer's own byte-level mutator, which custom mutators may call; here a small stand-in
// (flip, overwrite, insert or erase a byte) so the same mutator code runs without libFuzzer.
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size,
                                        std::size_t max_size) {
  std::mt19937& rng = byte_mutation_engine;
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  switch (rng() % 4) {
    case 0:
      if (size > 0) data[pick(size)] ^= static_cast<std::uint8_t>(1U << pick(8));
      break;
    case 1:
      if (size > 0) data[pick(size)] = static_cast<std::uint8_t>(rng());
      break;
    case 2:
      if (size < max_size) {
        const std::size_t at = pick(size + 1);
        std::memmove(data + at + 1, data + at, size - at);
        data[at] = static_cast<std::uint8_t>(rng());
        ++size;
      }
      break;
    default:
      if (size > 0) {
        const std::size_t at = pick(size);
        std::memmove(data + at, data + at + 1, size - at - 1);
        --size;
      }
      break;
  }
  return size;
}

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxMutantSize = 1 << 20;

void run(const std::vector<std::uint8_t>& bytes) {
  // A copy of exactly the input's size, so ASan sees a read past its end.
  std::vector<std::uint8_t> copy(bytes);
  LLVMFuzzerTestOneInput(copy.empty() ? nullptr : copy.data(), copy.size());
}

bool read_file(const fs::path& path, std::vector<std::uint8_t>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

// The files to replay, in a stable order: every regular file under each argument.
bool collect(const fs::path& path, std::vector<fs::path>& files) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    std::vector<fs::path> found;
    for (const auto& entry : fs::recursive_directory_iterator(path, error)) {
      if (entry.is_regular_file()) found.push_back(entry.path());
    }
    if (error) return false;
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
    return true;
  }
  if (fs::is_regular_file(path, error)) {
    files.push_back(path);
    return true;
  }
  return false;
}

bool numeric_flag(std::string_view arg, std::string_view name, unsigned long& value) {
  if (arg.substr(0, name.size()) != name) return false;
  value = std::strtoul(std::string(arg.substr(name.size())).c_str(), nullptr, 10);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // A replay checks each input under every option set (pipeline.hpp); fuzzing samples them.
  ggufcheck::fuzz::every_run = true;
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  unsigned long mutations = 0;
  unsigned long seed = 1;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "-help" || arg == "--help") {
      std::printf(
          "usage: %s [-mutations=N] [-seed=S] [-sampled] FILE|DIR...\n"
          "Replays every file (directories recursively) through the fuzz target. This build\n"
          "has no fuzzing engine; configure with the `fuzz` preset for libFuzzer.\n"
          "  -mutations=N  also run N chained custom-mutator mutants of every input\n"
          "  -seed=S       seed of those mutants (default 1)\n"
          "  -sampled      check each input as a fuzzing run does (the checks its bytes choose),\n"
          "                not under every option set: to time or profile the target\n",
          argv[0]);
      return 0;
    }
    if (numeric_flag(arg, "-mutations=", mutations) || numeric_flag(arg, "-seed=", seed)) continue;
    if (arg == "-sampled") {
      ggufcheck::fuzz::every_run = false;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "%s: unknown option %s (this build only replays files; see -help)\n",
                   argv[0], argv[i]);
      return 2;
    }
    if (!collect(argv[i], files)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [-mutations=N] [-seed=S] FILE|DIR... (see -help)\n", argv[0]);
    return 2;
  }

  std::size_t executions = 0;
  std::vector<std::uint8_t> bytes, next;
  for (std::size_t index = 0; index < files.size(); ++index) {
    if (!read_file(files[index], bytes)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], files[index].c_str());
      return 2;
    }
    run(bytes);
    ++executions;
    if (mutations == 0 || LLVMFuzzerCustomMutator == nullptr) continue;
    std::vector<std::uint8_t> mutant(bytes);
    for (unsigned long m = 0; m < mutations; ++m) {
      const auto mutant_seed = static_cast<unsigned>(seed * 1000003UL + index * 7919UL + m);
      byte_mutation_engine.seed(mutant_seed);
      const std::size_t size = mutant.size();
      mutant.resize(std::max(kMaxMutantSize, size));
      mutant.resize(LLVMFuzzerCustomMutator(mutant.data(), size, mutant.size(), mutant_seed));
      run(mutant);
      ++executions;
    }
    if (LLVMFuzzerCustomCrossOver != nullptr && index + 1 < files.size() &&
        read_file(files[index + 1], next)) {
      std::vector<std::uint8_t> out(kMaxMutantSize);
      out.resize(LLVMFuzzerCustomCrossOver(bytes.data(), bytes.size(), next.data(), next.size(),
                                           out.data(), out.size(),
                                           static_cast<unsigned>(seed + index)));
      run(out);
      ++executions;
    }
  }
  std::printf("%s: %zu files, %zu executions, no failure\n", argv[0], files.size(), executions);
  return 0;
}
