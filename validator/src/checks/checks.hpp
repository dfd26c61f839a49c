// The container checks over the file index and its layout, by area. Each is a stage the
// validate/ registry runs, in its order; none changes the index.
#pragma once

#include "index/file_index.hpp"
#include "index/layout.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

void check_keys(const FileIndex& index, const DataLayout& layout, Sink& sink);
void check_values(const FileIndex& index, const DataLayout& layout, Sink& sink);
void check_tensor_infos(const FileIndex& index, const DataLayout& layout, Sink& sink);
void check_layout(const FileIndex& file_index, const DataLayout& layout, Sink& sink);
void check_standard_keys(const FileIndex& index, const DataLayout& layout, Sink& sink);

}  // namespace ggufcheck::detail
