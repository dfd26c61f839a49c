// The reader: the grammar of a GGUF file, read once, into the file index.
#pragma once

#include <cstdint>
#include <string_view>

#include "index/file_index.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

// Told of each top-level string array as the reader meets it, before its elements are read, so
// that work on them can start beside the reading (the token index, llama_loader/token_index.hpp,
// which validate/ passes). It gets the index as read so far, to read nothing but through it.
// array_offset: the value's element type field; elements_offset: the first element's length.
class StringArrayObserver {
 public:
  virtual ~StringArrayObserver() = default;
  virtual void on_string_array(const FileIndex& index, std::string_view key,
                               std::uint64_t array_offset, std::uint64_t elements_offset,
                               std::uint64_t count) = 0;
};

// Header, metadata pairs and tensor infos into the index; reports what makes the bytes
// unreadable (truncation, impossible counts, unknown types, nesting). Stops a section only where
// continuing would mean guessing. index.input (and, for a stream, index.tail) say what is read.
// Nothing changes the index after this returns.
void read_model(FileIndex& index, Sink& sink, StringArrayObserver* observer = nullptr);

}  // namespace ggufcheck::detail
