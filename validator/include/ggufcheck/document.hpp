// Reading a file back into a Document (owned values), the inverse of the writer: used by the
// round-trip properties and the fuzzers.
#pragma once

#include <optional>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck {

// The document the bytes hold, or nullopt when the header, a metadata pair or a tensor info
// cannot be read (what the validator reports as truncated, impossible or unknown). Tensor
// offsets are set explicitly; a tensor's data is set when its type and dims define a size and
// the bytes lie inside the file. Nested arrays are read up to Limits{}.max_depth. Every value
// is materialised (a Value per array element): meant for tests and fuzzers, not for large files.
[[nodiscard]] std::optional<Document> read_document(Bytes bytes);

}  // namespace ggufcheck
