// The JSON manifest reader of `ggufcheck verify` (docs/hash.md) on arbitrary bytes: it never
// throws or crashes, reads the same bytes the same way twice, and what it accepts holds what
// verify relies on (a file per model, every tensor's sha256, file indices in range); comparing
// an accepted manifest with a model that has none of its tensors names every one as missing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ggufcheck/hash.hpp"
#include "pipeline.hpp"

namespace {

// Manifests are written by ggufcheck and are small; 1 MiB reaches every shape the schema has.
constexpr std::size_t kMaxInput = std::size_t{1} << 20;

std::string check_manifest(std::string_view text) {
  using namespace ggufcheck;
  const ManifestRead first = parse_manifest(text);
  const ManifestRead again = parse_manifest(text);
  if (first.manifest.has_value() != again.manifest.has_value() || first.error != again.error) {
    return "the same bytes read two ways";
  }
  if (!first.manifest) return first.error.empty() ? "refused without a reason" : "";
  if (!first.error.empty()) return "accepted with an error";
  for (const ManifestModel& model : first.manifest->models) {
    if (model.files.empty()) return "a model without a file";
    for (const ManifestTensor& t : model.tensors) {
      if (!t.sha256) return "a tensor without sha256";
      if (t.file >= model.files.size()) return "a file index out of range";
    }
    HashResult none;
    VerifyOptions options;
    options.ignore_header = true;
    const Verification v = compare(model, none, options);
    if (v.differences.size() < model.tensors.size()) return "a missing tensor not named";
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInput) return 0;
  const ggufcheck::Bytes bytes(data, size);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ggufcheck::fuzz::fail_if(check_manifest(text), bytes);
  return 0;
}
