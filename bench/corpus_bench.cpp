// How fast the corpus's hostile files are rejected, in process: each file of corpus/hostile/ and
// corpus/threats/ is validated (strict profile) from memory, against a baseline measured in the
// same run: valid/minimal.gguf, the smallest file strict passes. A hostile header must cost about
// what a tiny valid file costs, whatever it claims (2^63 entries, 2^62-element arrays, 1000-deep
// nesting): the ratio column says so.
//
// Usage: ggufcheck_corpus_bench [--corpus DIR] [benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/validate.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void register_file(const std::string& name, const fs::path& path) {
  benchmark::RegisterBenchmark(name.c_str(), [bytes = read_bytes(path)](benchmark::State& state) {
    const ggufcheck::Options options;
    for (auto _ : state) {
      ggufcheck::Report report =
          ggufcheck::validate(ggufcheck::Bytes(bytes.data(), bytes.size()), options);
      benchmark::DoNotOptimize(report);
    }
  })->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  fs::path corpus = GGUFCHECK_BENCH_CORPUS_DIR;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--corpus" && i + 1 < argc) {
      corpus = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  const fs::path baseline = corpus / "valid" / "minimal.gguf";
  if (!fs::exists(baseline)) {
    std::fprintf(stderr, "ggufcheck_corpus_bench: no baseline file %s\n", baseline.c_str());
    return 2;
  }
  register_file("baseline: valid/minimal", baseline);
  std::vector<fs::path> files;
  for (const char* group : {"hostile", "threats"}) {
    for (const auto& entry : fs::directory_iterator(corpus / group)) {
      if (entry.path().extension() == ".gguf") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    register_file(f.parent_path().filename().string() + "/" + f.stem().string(), f);
  }
  int count = static_cast<int>(rest.size());
  benchmark::Initialize(&count, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
