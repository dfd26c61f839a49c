// What llama.cpp's model loader (llama_model_load_from_file in the pinned llama.cpp) makes of a
// file that parses as GGUF: the architecture, the hyperparameter keys it reads and their types,
// the vocabulary, the tensor set and shapes. The tables come from that llama.cpp's source
// (generated/, written by validator/tools/llama_tables).
#pragma once

#include <cstddef>
#include <span>

#include "index/file_index.hpp"
#include "index/layout.hpp"
#include "read/artifact_kind.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

class TokenIndexObserver;  // token_index.hpp

// A model or a vocabulary-only file (kind: read/artifact_kind.hpp) as the model loader reads it:
// the model stage's part (artifacts/model_stage.cpp) for those kinds, on a metadata read whole.
// A shard of a split set (split.count above 1) gets the key and vocabulary checks of its own
// metadata only: its tensor set is checked with the whole set's (check_tensor_set).
// tokens: the token index the reader's observer built, or null (the check indexes inline).
void check_model_loader(const FileIndex& index, const KindOf& kind, Sink& sink,
                        TokenIndexObserver* tokens = nullptr);

// GGUF7015: llama.cpp's reader compares every pair of keys and of tensor names, so a file with
// very many takes seconds to open, whatever its kind.
void check_reference_load_cost(const FileIndex& index, Sink& sink);

// One tensor of the model as the loader sees it: tensor `index` of shard `shard` (0 for a file
// that is not split), read into `file`.
struct TensorRef {
  const FileIndex* file = nullptr;
  std::size_t shard = 0;
  std::size_t index = 0;
};
// The tensor set against the one the architecture (read from `first`, the first shard's
// metadata) needs: missing, unexpected and misshapen tensors. A finding about a tensor goes to
// sinks[its shard]; a missing tensor's to sinks[0]. Names are compared as llama.cpp does (C
// strings); duplicates across shards are the split-set check's (GGUF8005), not this one's.
void check_tensor_set(const FileIndex& first, std::span<const TensorRef> tensors,
                      std::span<Sink* const> sinks);

// The vocabulary as llama.cpp's llama_vocab::load reads it (vocab.cpp): tokenizer model and
// pre-tokenizer names, merges, the types and lengths of the token arrays, duplicate token texts,
// special token ids. Runs on models and on vocabulary-only files alike.
void check_vocabulary(const FileIndex& index, Sink& sink, TokenIndexObserver* tokens = nullptr);

}  // namespace ggufcheck::detail
