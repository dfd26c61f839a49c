// An importance matrix as common_imatrix_load (common/imatrix-loader.cpp of the pinned llama.cpp)
// reads it, for llama-imatrix (--in-file) and llama-quantize (--imatrix): at least one tensor;
// imatrix.chunk_count and imatrix.chunk_size, when present, read with gguf_get_val_u32 (which
// aborts on another type); every "<name>.in_sum2" with its "<name>.counts" and the reverse,
// both F32. llama-quantize (tools/quantize/quantize.cpp, load_imatrix) also refuses a file
// without all of imatrix.datasets, imatrix.chunk_count and imatrix.chunk_size, and divides by
// the element count of each counts tensor (none: a crash). Other tensors and keys are ignored,
// as the readers ignore them.
#include <map>
#include <string>
#include <utility>

#include "artifacts/artifacts.hpp"
#include "index/keys.hpp"

namespace ggufcheck::detail {

namespace {

constexpr std::uint32_t kF32 = 0;
constexpr std::string_view kSums = ".in_sum2";
constexpr std::string_view kCounts = ".counts";

}  // namespace

void check_imatrix(const FileIndex& index, Sink& sink) {
  if (index.tensor_count == 0) {
    report_file(sink, index, Code::ImatrixInvalid, "tensors",
                "write each weight's <name>.in_sum2 and <name>.counts tensors (llama-imatrix "
                "writes them)",
                "the importance matrix has no tensors: llama.cpp's imatrix reader refuses it "
                "(\"no data in file\")");
    return;
  }
  for (const std::string_view key :
       {"imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"}) {
    if (ggml_key(index, key)) continue;
    report_file(sink, index, Code::ImatrixInvalid, "metadata",
                "write imatrix.datasets (strings), imatrix.chunk_count and imatrix.chunk_size "
                "(uint32), as llama-imatrix does",
                "no {}: llama-quantize refuses the importance matrix (missing imatrix metadata)",
                key);
  }
  for (const std::string_view key : {"imatrix.chunk_count", "imatrix.chunk_size"}) {
    const auto kv = ggml_key(index, key);
    if (!kv || index.metadata[*kv].type() == ValueType::Uint32) continue;
    report_pair(sink, index, Code::ImatrixInvalid, *kv, "write it as a uint32",
                "{} is {}, not uint32: llama.cpp's imatrix reader aborts (gguf_get_val_u32)", key,
                to_string(index.metadata[*kv].type()));
  }
  if (!index.tensors_complete || sink.structure_broken(Area::TensorInfo)) {
    sink.report(Code::StageNotRun, 0, 0, Field("model"),
                "fix the tensor infos first; the imatrix reader reads every one",
                "the importance matrix's tensor checks did not run: {}",
                index.tensors_complete ? "a tensor info is malformed"
                                       : "the tensor infos were not all read");
    return;
  }
  // The pairs by weight name, in the reader's order (a std::map): the index of each half; a
  // later tensor of the same name (a duplicate, itself an error) takes the place, as in the map.
  constexpr std::size_t kNone = SIZE_MAX;
  std::map<std::string, std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    const std::string_view name = ggml_name(index, i);
    if (name.empty()) continue;
    if (name.ends_with(kSums)) {
      auto& p =
          pairs.try_emplace(std::string(name.substr(0, name.size() - kSums.size())), kNone, kNone)
              .first->second;
      p.first = i;
    } else if (name.ends_with(kCounts)) {
      auto& p =
          pairs.try_emplace(std::string(name.substr(0, name.size() - kCounts.size())), kNone, kNone)
              .first->second;
      p.second = i;
    }
  }
  for (const auto& [name, halves] : pairs) {
    const auto [sums, counts] = halves;
    if (sums == kNone || counts == kNone) {
      const std::size_t there = sums == kNone ? counts : sums;
      report_tensor(sink, index, Code::ImatrixInvalid, there,
                    "write both tensors of every weight, or neither",
                    "\"{}\" has no {} tensor: llama.cpp's imatrix reader refuses the file "
                    "(mismatched sums and counts)",
                    escape(name), sums == kNone ? "in_sum2" : "counts");
      continue;
    }
    if (const auto dims = index.dims(counts);
        dims[0] == 0 || dims[1] == 0 || dims[2] == 0 || dims[3] == 0) {
      report_tensor(sink, index, Code::ImatrixInvalid, counts,
                    "write one count per expert: counts is [1, n_mat]",
                    "{} has no elements: llama-quantize divides by their number and crashes",
                    escape(ggml_name(index, counts)));
    }
    for (const std::size_t i : {sums, counts}) {
      if (index.tensors[i].type == kF32) continue;
      const TensorTypeInfo* type = tensor_type(index.tensors[i].type);
      report_tensor(sink, index, Code::ImatrixInvalid, i, "write the imatrix tensors as F32",
                    "{} is {}, not F32: llama.cpp's imatrix reader refuses the file",
                    escape(ggml_name(index, i)),
                    type != nullptr ? std::string(type->name)
                                    : fmt::format("type {}", index.tensors[i].type));
    }
  }
}

}  // namespace ggufcheck::detail
