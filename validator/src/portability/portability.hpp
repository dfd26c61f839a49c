// What other widely used GGUF parsers read differently from llama.cpp, or refuse (GGUF95xx).
#pragma once

#include "index/file_index.hpp"
#include "index/layout.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

void check_portability(const FileIndex& index, const DataLayout& layout, Sink& sink);

}  // namespace ggufcheck::detail
