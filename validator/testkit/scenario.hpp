// A scenario of a diagnostic code: a file that shows the code and where its finding must point.
// The code table (code_table.hpp) holds every code's scenarios; test_codes.cpp validates each
// under every profile and compares the finding's severity, offset, length and field path, and
// the whole set of codes reported. A scenario is data: running it is the test's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

// One file of a split set: its name in the set's folder, its bytes, and the codes the set's
// checks report on it (declared, as a code example's `also` is).
struct ExampleFile {
  std::string name;
  Written written;
  std::vector<Code> codes;
};

// A file of `size` bytes: `prefix`, then `fill` bytes up to the end. Past the first pages it is
// one 2 MiB memfd of fill bytes mapped again and again, so a 1 GiB string costs neither 1 GiB of
// memory nor the time to write it.
class BigBuffer {
 public:
  BigBuffer(const ByteVector& prefix, std::size_t size, std::uint8_t fill);
  ~BigBuffer();
  BigBuffer(const BigBuffer&) = delete;
  BigBuffer& operator=(const BigBuffer&) = delete;
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] Bytes bytes() const { return {data_, size_}; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_;
  std::size_t mapped_ = 0;
  bool ok_ = false;
};

// What a scenario's file is and where the finding must point.
struct Scenario {
  ByteVector bytes;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string path;
  std::vector<Code> also;   // the other codes the file triggers (each profile keeps the ones
                            // design.md does not silence there); the fewer the better
  std::string message_has;  // a substring the message must contain
  std::string hint_has;     // a substring the hint must contain
  Limits limits;
  std::shared_ptr<BigBuffer> big;  // validated instead of bytes when set
  // Validated as a path (validate_file) instead of bytes: an entry of the test's temporary
  // directory that must not exist (the runner removes it first), or "" for the directory itself.
  std::optional<std::string> temp_file;
  bool data = false;  // with the data check (check --data)
  // With the model checks (the Model and SplitSet codes' cases): other cases' files are
  // containers, not models llama.cpp loads.
  bool model_checks = false;
  // A split set's files (the SplitSet codes' cases), written to a directory of their own and
  // validated together as the CLI does (validate_set on the first one's path): the report of
  // file `set_report` is the case's. A file alone is a set of one.
  std::vector<ExampleFile> set;
  std::size_t set_report = 0;
  // An adapter's base model (--base), a file named from the repository's root.
  std::string base;
};

// A scenario of these bytes, the finding at [offset, offset + length) with this field path.
[[nodiscard]] Scenario at(ByteVector bytes, std::uint64_t offset, std::uint64_t length,
                          std::string path, std::vector<Code> also = {});

// Field paths as design.md writes them: kv[3] "general.alignment" type.
[[nodiscard]] std::string kv_path(std::size_t index, std::string_view shown_key,
                                  std::string_view field = {});
[[nodiscard]] std::string tensor_path(std::size_t index, std::string_view shown_name,
                                      std::string_view field = {});

}  // namespace ggufcheck::testing
