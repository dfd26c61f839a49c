// What llama.cpp's model loader (llama_model_load_from_file in the pinned llama.cpp) makes of a
// file that parses as GGUF: the architecture, the hyperparameter keys it reads and their types,
// the vocabulary, the tensor set and shapes. The tables come from that llama.cpp's source
// (generated/, written by validator/tools/llama_tables).
#pragma once

#include "model/layout.hpp"
#include "model/model.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

// The model stage (registered in checks/pipeline.cpp): runs on files whose structure is sound.
void check_model(const Model& model, const Layout& layout, Sink& sink);

// The vocabulary as llama.cpp's llama_vocab::load reads it (vocab.cpp): tokenizer model and
// pre-tokenizer names, merges, the types and lengths of the token arrays, duplicate token texts,
// special token ids. Runs on models and on vocabulary-only files alike.
void check_vocabulary(const Model& model, Sink& sink);

}  // namespace ggufcheck::detail
