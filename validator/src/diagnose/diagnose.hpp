// Writer diagnosis (GGUF1901..GGUF1904): for inputs that fail structurally, the notes of the
// wrong-writer hypotheses that explain them, at the offset of their first error.
#pragma once

#include "index/file_index.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

// How a hypothesis is tried: the reader and the structural checks over an index whose input and
// dialect are set, reporting into the sink. The pipeline (validate/) passes its own, so that a
// hypothesis is judged by exactly the checks that judged the file.
using StructureChecks = void (*)(FileIndex& index, Sink& sink);

// tail: what is known of a stream's bytes past those kept (null for a file read whole).
void diagnose_writer(const Input& input, const StreamTail* tail, Sink& sink,
                     StructureChecks structure_checks);

}  // namespace ggufcheck::detail
