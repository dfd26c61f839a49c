// The tensor data kernels (validator/src/data/kernels.hpp) on arbitrary bytes: byte 0 chooses
// the ggml type, byte 1 how far from a 64-byte boundary the data starts, byte 2 where to cut the
// run in two; the rest is the data (its whole blocks). On every SIMD target this CPU runs, the
// kernels' result must equal the scalar reference's (validator/testkit/data_reference.hpp) field
// for field, and so must the merge of the two pieces of the run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "data/kernels.hpp"
#include "data_reference.hpp"
#include "ggufcheck/format.hpp"
#include "pipeline.hpp"

namespace {

using ggufcheck::detail::BlockScan;
using ggufcheck::detail::DataTally;

std::string describe(const DataTally& t) {
  char text[160];
  std::snprintf(
      text, sizeof text, "{count %llu nan %llu inf %llu first %llu field %d sub %d bits 0x%llx}",
      static_cast<unsigned long long>(t.count), static_cast<unsigned long long>(t.nan),
      static_cast<unsigned long long>(t.inf), static_cast<unsigned long long>(t.first),
      static_cast<int>(t.field), static_cast<int>(t.sub), static_cast<unsigned long long>(t.bits));
  return text;
}

std::string describe(const BlockScan& s) {
  return "non_finite " + describe(s.non_finite) + " nvfp4_scale " + describe(s.nvfp4_scale) +
         (s.nonzero ? " nonzero" : " all zero");
}

bool same(const DataTally& a, const DataTally& b) {
  return a.count == b.count && a.nan == b.nan && a.inf == b.inf && a.first == b.first &&
         a.field == b.field && a.sub == b.sub && a.bits == b.bits;
}

bool same(const BlockScan& a, const BlockScan& b) {
  return same(a.non_finite, b.non_finite) && same(a.nvfp4_scale, b.nvfp4_scale) &&
         a.nonzero == b.nonzero;
}

std::string check_kernels(const std::uint8_t* input, std::size_t size) {
  // Three bytes choose the type, the alignment and the cut; missing ones read as zero, so that
  // every input reaches the kernels (the empty one scans no F32 block). An input that ran no
  // instrumented code would give libFuzzer nothing to start from.
  const auto choice = [&](std::size_t i) -> std::uint8_t { return i < size ? input[i] : 0; };
  const std::size_t header = std::min<std::size_t>(size, 3);
  const std::uint32_t type = choice(0) % ggufcheck::kTensorTypeCount;
  const ggufcheck::TensorTypeInfo* info = ggufcheck::tensor_type(type);
  if (info->removed()) return {};  // the tensor-info checks reject these before any data is read
  const std::size_t misalign = choice(1) % 64;
  const std::size_t bytes = size - header;
  const std::uint64_t blocks = bytes / info->type_size;
  const std::uint64_t cut = blocks * choice(2) / 255;
  // A copy at the chosen distance from an aligned start, so every alignment is reached.
  std::vector<std::uint8_t> buffer(128 + bytes);
  const auto start = reinterpret_cast<std::uintptr_t>(buffer.data());
  std::uint8_t* data = buffer.data() + ((64 - start % 64) % 64) + misalign;
  if (bytes != 0) std::memcpy(data, input + header, bytes);

  const BlockScan want = ggufcheck::testing::reference_scan_blocks(type, data, blocks);
  std::string problem;
  for (const std::string& target : ggufcheck::detail::kernel_targets()) {
    ggufcheck::detail::use_kernel_target(target);
    const BlockScan got = ggufcheck::detail::scan_blocks(type, data, blocks);
    BlockScan merged = ggufcheck::detail::scan_blocks(type, data, cut);
    merged.merge(ggufcheck::detail::scan_blocks(type, data + cut * info->type_size, blocks - cut),
                 cut);
    const std::string where = target + " " + std::string(info->name) + ", " +
                              std::to_string(blocks) + " blocks, data at 64k+" +
                              std::to_string(misalign) + ": ";
    if (!same(got, want)) {
      problem = where + "kernel " + describe(got) + " != reference " + describe(want);
    } else if (!same(merged, want)) {
      problem = where + "pieces cut at " + std::to_string(cut) + " merge to " + describe(merged) +
                " != " + describe(want);
    }
    if (!problem.empty()) break;
  }
  ggufcheck::detail::use_kernel_target("");
  return problem;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ggufcheck::fuzz::fail_if(check_kernels(data, size), ggufcheck::Bytes(data, size));
  return 0;
}
