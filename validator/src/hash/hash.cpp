// hash_model: validate each file, then stream its tensors through the engine; and the texts of
// llama-gguf-hash (its lines, its --check) rendered from the result.
#include "ggufcheck/hash.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ggufcheck/render.hpp"
#include "hash/engine.hpp"
#include "index/keys.hpp"
#include "report/sink.hpp"
#include "util/digest.hpp"
#include "validate/validate.hpp"

namespace ggufcheck {

namespace {

using detail::HashEngine;
using detail::Segment;

// How the files are read before hashing: the layout llama.cpp computes (its rule for finding
// general.alignment), the container alone.
Options validation_options() {
  Options options;
  options.profile = Profile::LlamaCpp;
  options.model_checks = false;
  options.template_checks = false;
  options.helper_thread = false;
  return options;
}

// The first error of a report, for a file that cannot be hashed.
std::string first_error(const Report& report) {
  for (const Finding& f : report.findings) {
    if (f.severity != Severity::Error) continue;
    return fmt::format("{} {}: {}{}", code_string(f.code), catalogue_entry(f.code).name,
                       f.path.empty() ? "" : f.path + ": ", f.message);
  }
  return "its structure cannot be read";
}

struct FileRead {
  int status = 0;
  std::string error;
};

// Validates one file and fills its records; the segments to hash (its header with the manifest,
// then its tensors in tensor-info order).
FileRead read_file(const detail::Validated& v, std::uint64_t size, const HashOptions& options,
                   HashResult& result, std::vector<Segment>& segments) {
  const detail::FileIndex& index = v.index;
  const detail::DataLayout& layout = v.layout;
  if (v.report.unreadable()) return {2, first_error(v.report)};
  if (!index.header_complete || !index.metadata_complete || !index.tensors_complete) {
    return {1, first_error(v.report)};
  }
  const std::size_t file = result.files.size() - 1;
  FileHash& fh = result.files.back();
  fh.size = size;
  fh.tensor_count = index.tensors.size();
  fh.data_start = size;
  if (!index.tensors.empty()) {
    if (!layout.data_start || *layout.data_start > size) {
      return {1, fmt::format("the tensor data would start past the end of the file ({})",
                             first_error(v.report))};
    }
    fh.data_start = *layout.data_start;
  }
  if (const auto i = detail::find_key(index, "general.uuid", Profile::LlamaCpp)) {
    if (index.metadata[*i].type() == ValueType::String) {
      fh.general_uuid = std::string(index.string_value(*i));
    } else {
      fh.general_uuid_problem =
          fmt::format("general.uuid is {}, not a string", to_string(index.metadata[*i].type()));
    }
  }
  if (options.manifest) segments.push_back({0, fh.data_start, Segment::Kind::Header, file});
  // Every tensor's range inside the file (the layout's sums are overflow-checked), and no two
  // overlapping: the bytes read are then at most the file's size.
  std::vector<std::pair<std::uint64_t, std::size_t>> starts;
  const std::size_t first = result.tensors.size();
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    const std::string_view name = index.name(i);
    const auto extent = layout.tensor(index, i);
    const auto path = [&] { return fmt::format("tensor[{}] \"{}\"", i, detail::escape(name)); };
    if (!extent) {
      return {1, fmt::format("{}: its type and dims give no byte size ({})", path(),
                             first_error(v.report))};
    }
    if (!extent->begin || *extent->begin > size || extent->nbytes > size - *extent->begin) {
      return {1, fmt::format("{}: its data ({} at offset 0x{:x} of the data section) is not "
                             "inside the file ({})",
                             path(), detail::byte_count(extent->nbytes), extent->data_offset,
                             detail::byte_count(size))};
    }
    TensorHash t;
    t.name = std::string(name);
    t.type = index.tensors[i].type;
    const auto dims = index.dims(i);
    t.shape.assign(dims.begin(), dims.begin() + index.tensors[i].n_dims);
    t.offset = extent->data_offset;
    t.nbytes = extent->nbytes;
    t.file = file;
    result.tensors.push_back(std::move(t));
    result.tensor_bytes += extent->nbytes;
    segments.push_back({*extent->begin, extent->nbytes, Segment::Kind::Tensor, first + i});
    if (extent->nbytes > 0) starts.emplace_back(*extent->begin, i);
  }
  std::sort(starts.begin(), starts.end());
  for (std::size_t k = 1; k < starts.size(); ++k) {
    const TensorHash& before = result.tensors[first + starts[k - 1].second];
    if (starts[k - 1].first + before.nbytes > starts[k].first) {
      const TensorHash& after = result.tensors[first + starts[k].second];
      return {1, fmt::format("the data of tensor \"{}\" and tensor \"{}\" overlap",
                             detail::escape(before.name), detail::escape(after.name))};
    }
  }
  // The gaps: every byte of [data_start, size) outside the tensors (alignment padding, gaps
  // between tensors, trailing bytes), in file order, so that the header, the tensors and the gaps
  // together are the whole file.
  fh.gaps_sha256 = detail::sha256_of(nullptr, 0);
  std::uint64_t at = fh.data_start;
  const auto gap = [&](std::uint64_t begin, std::uint64_t end) {
    if (end <= begin) return;
    fh.gaps.emplace_back(begin, end - begin);
    fh.gap_bytes += end - begin;
    if (options.manifest) segments.push_back({begin, end - begin, Segment::Kind::Gap, file});
  };
  for (const auto& [begin, i] : starts) {
    gap(at, begin);
    at = std::max(at, begin + result.tensors[first + i].nbytes);
  }
  gap(at, size);
  return {};
}

}  // namespace

HashResult hash_model(const std::vector<std::string>& paths, const HashOptions& options) {
  HashResult result;
  const Options validation = validation_options();
  std::unique_ptr<HashEngine> engine;
  const auto fail = [&](int status, std::string error) {
    HashResult failed;
    failed.status = status;
    failed.error = std::move(error);
    return failed;
  };
  for (const std::string& path : paths) {
    if (options.cancel != nullptr && options.cancel->load()) return fail(130, "interrupted");
    // Only regular files: a FIFO or a device would be read as a stream, whole.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      return fail(2, fmt::format("cannot open {}: {}", shown_name(path), std::strerror(errno)));
    }
    if (!S_ISREG(st.st_mode)) {
      return fail(2, fmt::format("cannot hash {}: not a regular file", shown_name(path)));
    }
    result.files.push_back({});
    result.files.back().path = path;
    FileRead read;
    const auto input_error = detail::with_input(path, [&](const detail::Input& input) {
      detail::Validated v;
      detail::validate_input(input, nullptr, validation, path, v);
      std::vector<Segment> segments;
      read = read_file(v, input.size(), options, result, segments);
      if (read.status != 0) return;
      if (input.mapped_fd() < 0) {
        read = {2, fmt::format("cannot read {}: not a file that can be mapped", shown_name(path))};
        return;
      }
      if (!engine) {  // the UUID's lane depends on the first file's general.uuid
        const bool uuid =
            options.algorithms.uuid ||
            (options.uuid_if_declared && result.files.front().general_uuid.has_value());
        engine = std::make_unique<HashEngine>(options, uuid);
      }
      if (auto error = engine->run(input, path, segments, result)) {
        read = {2, std::move(*error)};
      }
    });
    if (!input_error.ok()) return fail(2, shown_name(input_error.why()));
    if (read.status != 0)
      return fail(read.status, fmt::format("{}: {}", shown_name(path), read.error));
    if (engine && engine->cancelled()) return fail(130, "interrupted");
  }
  if (!engine) {  // no file: nothing hashed, the digests of nothing
    engine = std::make_unique<HashEngine>(options, options.algorithms.uuid);
  }
  engine->finish(result);
  if (options.manifest) {
    std::vector<Sha256Digest> leaves;
    leaves.reserve(result.tensors.size());
    for (const TensorHash& t : result.tensors) leaves.push_back(t.sha256);
    result.merkle_root = merkle_root(leaves);
  }
  return result;
}

}  // namespace ggufcheck
