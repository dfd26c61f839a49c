// The tensor data kernels: what llama.cpp's data check (ggml_validate_row_data) looks at in the
// blocks of each ggml type, plus what ggufcheck checks beyond it (NVFP4 scale bytes, all-zero
// bytes). SIMD with run-time dispatch (Highway's targets, chosen once from the CPU), one scalar
// path below them. A kernel sees whole blocks only: the scan (scan.hpp) cuts a tensor's bytes
// at block boundaries, runs pieces on every core and merges the pieces' results.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck::detail {

inline constexpr std::uint64_t kNoBlock = UINT64_MAX;

// The field of a block a finding names.
enum class DataField : std::uint8_t {
  None,
  Element,      // f32, f16, bf16, f64: the block is one element
  D,            // the f16 scale d (the f32 d of q8_K)
  M,            // q4_1, q5_1: the f16 minimum m
  Dmin,         // q2_K, q4_K, q5_K: the f16 dmin
  E,            // mxfp4: the E8M0 scale byte e
  HiddenScale,  // iq1_m: the f16 scale spread over the top nibbles of scales[]
  SubScale,     // nvfp4: one of the four UE4M3 bytes d[0..3] (DataTally::sub says which)
};

// Bad blocks of one kind in a run of blocks.
struct DataTally {
  std::uint64_t count = 0;  // blocks with a bad value (elements, for the plain float types)
  std::uint64_t nan = 0;    // of them, those whose first bad value is a NaN (mxfp4 0xFF is one)
  std::uint64_t inf = 0;    // ... an infinity (count = nan + inf for the non-finite tally)
  std::uint64_t first = kNoBlock;     // index of the first bad block, from the start of the run
  DataField field = DataField::None;  // the first bad block's first bad field, in ggml's order
  std::uint8_t sub = 0;               // nvfp4: the index (0..3) of that scale byte
  std::uint64_t bits = 0;             // that field's raw value (little-endian), zero-extended

  // Adds the tally of a later or earlier run that starts `offset` blocks after this one's start.
  void merge(const DataTally& other, std::uint64_t offset);
};

struct BlockScan {
  DataTally non_finite;   // what ggml_validate_row_data rejects (no tally for q8_1: see below)
  DataTally nvfp4_scale;  // nvfp4 only: scale bytes 0x7F (UE4M3 NaN) or with bit 7 set
  bool nonzero = false;   // some byte of the run is not 0x00

  void merge(const BlockScan& other, std::uint64_t offset);
};

// Scans `blocks` whole blocks of ggml type `type` at `data` (blocks * type_size bytes). Types
// with nothing to check (the integer types, nvfp4 for non_finite, q8_1, which ggml refuses
// whatever its bytes) only set `nonzero`. `type` must be a known, not removed id (0..42): the
// tensor-info checks reject the others before any data is read.
[[nodiscard]] BlockScan scan_blocks(std::uint32_t type, const std::uint8_t* data,
                                    std::uint64_t blocks);

// The SIMD target scan_blocks runs ("AVX3", "AVX2", "SSE4", "EMU128"...), chosen once from
// the CPU; the ones compiled in that this CPU can run, best first; and, for tests and
// benchmarks, a way to pin one of those (an empty name restores the automatic choice).
[[nodiscard]] std::string_view kernel_target();
[[nodiscard]] std::vector<std::string> kernel_targets();
bool use_kernel_target(std::string_view name);  // false if the name is not in kernel_targets()

}  // namespace ggufcheck::detail
