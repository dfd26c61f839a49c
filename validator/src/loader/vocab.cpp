#include "loader/loader.hpp"

namespace ggufcheck::detail {

void check_vocabulary(const Model& /*model*/, Sink& /*sink*/) {}

}  // namespace ggufcheck::detail
