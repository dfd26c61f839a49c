#include "loader/loader.hpp"

namespace ggufcheck::detail {

void check_model(const Model& model, const Layout& /*layout*/, Sink& sink) {
  if (sink.structure_broken()) return;  // a misread file's keys and tensors mean nothing
  check_vocabulary(model, sink);
}

}  // namespace ggufcheck::detail

namespace ggufcheck::detail {

void check_tensor_set(const Model& /*first*/, std::span<const TensorRef> /*tensors*/,
                      std::span<Sink* const> /*sinks*/) {}

}  // namespace ggufcheck::detail
