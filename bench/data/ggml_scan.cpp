// ggufcheck_data_ggml: side (b) of the data-scan benchmark, llama.cpp's tensor-data check as
// its model loader runs it with check_tensors (llama-model-loader.cpp, load_all_data, mmap
// path), against the pinned libggml-base.so:
//   - tensor infos from gguf_init_from_file with no_alloc;
//   - the whole file mapped as llama_mmap maps it on Linux: POSIX_FADV_SEQUENTIAL, MAP_SHARED
//     with MAP_POPULATE (the loader prefetches), POSIX_MADV_WILLNEED;
//   - one std::async(std::launch::async) task per tensor calling ggml_validate_row_data(type,
//     data, nbytes), all started before any is collected, then every future collected.
//   ggufcheck_data_ggml [--lib LIBGGML_BASE] FILE
// Exit 0 when every tensor passed, 1 when one failed, 2 when the file cannot be loaded. Prints
// the tensor count, the bytes checked and the time of the mapping and of the tasks.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "ggml_abi.hpp"

namespace ggml = ggufcheck::testing::ggml;

namespace {

void quiet_log(int /*level*/, const char* /*text*/, void* /*user*/) {}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int scan(const std::string& lib_path, const std::string& path) {
  const ggml::Library library(lib_path);
  const ggml::Api& api = library.api();
  api.ggml_log_set(quiet_log, nullptr);
  const ggml::Loaded loaded(api, path.c_str());
  if (loaded.gguf() == nullptr) {
    std::fprintf(stderr, "ggml's reader rejects %s\n", path.c_str());
    return 2;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  if (fd < 0 || ::fstat(fd, &info) != 0) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return 2;
  }
  const auto file_size = static_cast<std::size_t>(info.st_size);

  const auto map_start = std::chrono::steady_clock::now();
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  void* mapped = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (mapped == MAP_FAILED) {
    std::fprintf(stderr, "cannot map %s: %s\n", path.c_str(), std::strerror(errno));
    return 2;
  }
  ::posix_madvise(mapped, file_size, POSIX_MADV_WILLNEED);
  const double map_seconds = seconds_since(map_start);

  const std::size_t data_offset = api.gguf_get_data_offset(loaded.gguf());
  const std::int64_t count = api.gguf_get_n_tensors(loaded.gguf());
  const auto* base = static_cast<const std::uint8_t*>(mapped);

  const auto scan_start = std::chrono::steady_clock::now();
  std::vector<std::future<std::pair<std::int64_t, bool>>> results;
  std::size_t checked = 0;
  for (std::int64_t id = 0; id < count; ++id) {
    const std::size_t offset = data_offset + api.gguf_get_tensor_offset(loaded.gguf(), id);
    const std::size_t nbytes = api.gguf_get_tensor_size(loaded.gguf(), id);
    if (offset > file_size || nbytes > file_size - offset) {
      std::fprintf(stderr, "tensor %lld lies outside the file\n", static_cast<long long>(id));
      return 2;
    }
    const int type = api.gguf_get_tensor_type(loaded.gguf(), id);
    const std::uint8_t* data = base + offset;
    const auto validate = api.ggml_validate_row_data;
    results.emplace_back(std::async(std::launch::async, [validate, id, type, data, nbytes] {
      return std::make_pair(id, validate(type, data, nbytes));
    }));
    checked += nbytes;
  }
  bool all_valid = true;
  for (auto& result : results) {
    const auto [id, valid] = result.get();
    if (!valid) {
      all_valid = false;
      std::printf("tensor '%s' has invalid data\n", api.gguf_get_tensor_name(loaded.gguf(), id));
    }
  }
  const double scan_seconds = seconds_since(scan_start);
  std::printf("%lld tensors, %zu bytes, map %.3f s, validate %.3f s: %s\n",
              static_cast<long long>(count), checked, map_seconds, scan_seconds,
              all_valid ? "valid" : "INVALID");
  ::munmap(mapped, file_size);
  ::close(fd);
  return all_valid ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib = GGUFCHECK_BENCH_GGML_LIB;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--lib" && i + 1 < argc) {
      lib = argv[++i];
    } else if (path.empty()) {
      path = arg;
    } else {
      std::fprintf(stderr, "usage: ggufcheck_data_ggml [--lib LIBGGML_BASE] FILE\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: ggufcheck_data_ggml [--lib LIBGGML_BASE] FILE\n");
    return 2;
  }
  try {
    return scan(lib, path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufcheck_data_ggml: %s\n", e.what());
    return 2;
  }
}
