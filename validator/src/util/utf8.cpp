// UTF-8 validation of large regions: AVX2 where the processor has it (the lookup algorithm of
// Keiser and Lemire, "Validating UTF-8 in less than one instruction per byte", 2021), else the
// shift DFA of utf8.hpp. A vocabulary holds megabytes of short strings; checking each string
// byte by byte was most of the validation time.
#include "util/utf8.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ggufcheck::detail {
namespace {

#if defined(__x86_64__)

// Error classes of a pair of adjacent bytes (byte 1 = the previous byte, byte 2 = this one).
constexpr std::uint8_t kTooShort = 1 << 0;      // lead then non-continuation
constexpr std::uint8_t kTooLong = 1 << 1;       // ASCII then continuation
constexpr std::uint8_t kOverlong3 = 1 << 2;     // E0 80..9F
constexpr std::uint8_t kTooLarge = 1 << 3;      // F4 90.., F5..FF
constexpr std::uint8_t kSurrogate = 1 << 4;     // ED A0..BF
constexpr std::uint8_t kOverlong2 = 1 << 5;     // C0/C1 then continuation
constexpr std::uint8_t kTooLarge1000 = 1 << 6;  // F5..FF 80..8F
constexpr std::uint8_t kOverlong4 = 1 << 6;     // F0 80..8F
constexpr std::uint8_t kTwoConts = 1 << 7;      // continuation then continuation
constexpr std::uint8_t kCarry = kTooShort | kTooLong | kTwoConts;

__attribute__((target("avx2"))) inline __m256i table(const std::uint8_t (&t)[16]) {
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t));
  return _mm256_broadcastsi128_si256(half);
}

// The 32 bytes ending N bytes before `input` starts (N = 1..3), across the block boundary.
template <int N>
__attribute__((target("avx2"))) inline __m256i previous(__m256i input, __m256i prev_input) {
  return _mm256_alignr_epi8(input, _mm256_permute2x128_si256(prev_input, input, 0x21), 16 - N);
}

__attribute__((target("avx2,popcnt"))) RegionScan scan_avx2(const std::uint8_t* s, std::size_t n) {
  static constexpr std::uint8_t kByte1High[16] = {
      kTooLong,
      kTooLong,
      kTooLong,
      kTooLong,
      kTooLong,
      kTooLong,
      kTooLong,
      kTooLong,
      kTwoConts,
      kTwoConts,
      kTwoConts,
      kTwoConts,
      kTooShort | kOverlong2,
      kTooShort,
      kTooShort | kOverlong3 | kSurrogate,
      kTooShort | kTooLarge | kTooLarge1000 | kOverlong4};
  static constexpr std::uint8_t kByte1Low[16] = {kCarry | kOverlong3 | kOverlong2 | kOverlong4,
                                                 kCarry | kOverlong2,
                                                 kCarry,
                                                 kCarry,
                                                 kCarry | kTooLarge,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000 | kSurrogate,
                                                 kCarry | kTooLarge | kTooLarge1000,
                                                 kCarry | kTooLarge | kTooLarge1000};
  static constexpr std::uint8_t kByte2High[16] = {
      kTooShort,
      kTooShort,
      kTooShort,
      kTooShort,
      kTooShort,
      kTooShort,
      kTooShort,
      kTooShort,
      kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge1000 | kOverlong4,
      kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge,
      kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
      kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
      kTooShort,
      kTooShort,
      kTooShort,
      kTooShort};
  // A block ending in a lead byte whose sequence cannot be complete within it.
  static constexpr std::uint8_t kIncompleteMax[32] = {
      255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,  255,  255,
      255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0xEF, 0xDF, 0xBF};

  const __m256i byte1_high = table(kByte1High);
  const __m256i byte1_low = table(kByte1Low);
  const __m256i byte2_high = table(kByte2High);
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i incomplete_max =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kIncompleteMax));
  __m256i error = _mm256_setzero_si256();
  __m256i prev_input = _mm256_setzero_si256();
  __m256i prev_incomplete = _mm256_setzero_si256();
  const __m256i zero = _mm256_setzero_si256();
  std::uint64_t zero_bytes = 0;

  // Whole blocks, then the tail copied into a zero-padded block (zeros are ASCII).
  std::uint8_t tail[32] = {};
  for (std::size_t i = 0; i < n;) {
    const std::uint8_t* block = s + i;
    if (n - i >= 32) {
      i += 32;
    } else {
      std::memcpy(tail, s + i, n - i);
      block = tail;
      i = n;
    }
    const __m256i input = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block));
    zero_bytes += static_cast<std::uint64_t>(__builtin_popcount(
        static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(input, zero)))));
    if (_mm256_movemask_epi8(input) == 0) {  // all ASCII: only a dangling sequence can fail
      error = _mm256_or_si256(error, prev_incomplete);
      prev_incomplete = _mm256_setzero_si256();
    } else {
      const __m256i prev1 = previous<1>(input, prev_input);
      const __m256i high1 = _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibble);
      const __m256i low1 = _mm256_and_si256(prev1, nibble);
      const __m256i high2 = _mm256_and_si256(_mm256_srli_epi16(input, 4), nibble);
      const __m256i special =
          _mm256_and_si256(_mm256_and_si256(_mm256_shuffle_epi8(byte1_high, high1),
                                            _mm256_shuffle_epi8(byte1_low, low1)),
                           _mm256_shuffle_epi8(byte2_high, high2));
      // Third and fourth bytes of a sequence must be continuations, and only they may be.
      const __m256i third =
          _mm256_subs_epu8(previous<2>(input, prev_input), _mm256_set1_epi8(0x60));
      const __m256i fourth =
          _mm256_subs_epu8(previous<3>(input, prev_input), _mm256_set1_epi8(0x70));
      const __m256i must_continue = _mm256_and_si256(_mm256_or_si256(third, fourth),
                                                     _mm256_set1_epi8(static_cast<char>(0x80)));
      error = _mm256_or_si256(error, _mm256_xor_si256(must_continue, special));
      prev_incomplete = _mm256_subs_epu8(input, incomplete_max);
    }
    prev_input = input;
  }
  error = _mm256_or_si256(error, prev_incomplete);
  // The tail block was padded with zeros that are not in the text.
  const std::size_t padding = n % 32 == 0 ? 0 : 32 - n % 32;
  return {_mm256_testz_si256(error, error) != 0, zero_bytes - padding};
}

bool has_avx2() {
  static const bool available = __builtin_cpu_supports("avx2");
  return available;
}

#endif

}  // namespace

RegionScan scan_region(std::string_view text) {
#if defined(__x86_64__)
  if (has_avx2()) return scan_avx2(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
#endif
  RegionScan scan;
  scan.valid_utf8 = is_valid_utf8(text);
  for (char c : text) scan.zero_bytes += c == 0 ? 1U : 0U;
  return scan;
}

}  // namespace ggufcheck::detail
