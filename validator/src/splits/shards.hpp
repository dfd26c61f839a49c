// One file of a split set: validated as a file alone (its own report, as validate_file gives
// it), and what the set checks need of it afterwards, which is little: its three split keys and
// its tensor infos (names, types, dims), never its other bytes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ggufcheck/validate.hpp"
#include "index/file_index.hpp"

namespace ggufcheck::detail {

// A split key as a shard holds it (the first pair with the key, by the profile's key identity).
struct SplitKey {
  bool present = false;
  ValueType type = ValueType::Uint8;
  ValueType element = ValueType::Uint8;  // arrays
  std::uint64_t count = 0;               // arrays: the number of elements
  // Scalars: the raw bits. An array of one u16: that element (llama.cpp reads it as a u16
  // where it asks ggml for the value without checking the type first).
  std::uint64_t value = 0;
  std::uint64_t type_offset = 0;
  std::uint64_t value_offset = 0;
  std::uint64_t value_length = 0;
  std::string field;  // kv[3] "split.no"

  [[nodiscard]] bool is(ValueType t) const { return present && type == t; }
  [[nodiscard]] bool one_u16_array() const {
    return is(ValueType::Array) && element == ValueType::Uint16 && count == 1;
  }
  [[nodiscard]] std::string type_name() const;  // "uint32", "uint16[1]"
};

struct SplitKeys {
  SplitKey no;
  SplitKey count;
  SplitKey tensors;
  bool quantization_version = false;  // general.quantization_version is there
};

// The tensor infos of a shard once its bytes are gone: a FileIndex whose input holds only the bytes
// of its tensor infos, at their offsets in the file, so that names, dims and the offsets of
// findings read as in the file. The rest of that memory is never written, so never resident.
class TensorSkeleton {
 public:
  TensorSkeleton() = default;
  // Copies the tensor records of `index` and the bytes they describe.
  static TensorSkeleton of(const FileIndex& index);
  [[nodiscard]] const FileIndex& index() const { return index_; }

 private:
  struct Mapping;
  std::shared_ptr<Mapping> bytes_;
  FileIndex index_;
};

struct SetShard {
  enum class State : std::uint8_t { Missing, Unreadable, Read };
  std::string path;  // as given
  State state = State::Unreadable;
  std::string missing;  // Missing: the system's words for it ("No such file or directory")
  Report report;        // Unreadable and Read: the file's own report
  // Read, with the model checks on, its metadata read whole: the split keys; and whether its
  // tensor infos were read whole, with their number.
  std::optional<SplitKeys> keys;
  bool tensors_read = false;
  std::uint64_t tensor_count = 0;
  TensorSkeleton skeleton;  // a later shard's tensor infos, once its bytes are gone
  // Unreadable: a shard by URL the set's deadline (RemoteOptions::deadline) left unfetched.
  bool not_fetched = false;
};

// Validates shard.path and fills `shard`. `use` is called while its bytes are mapped, with its
// index (null when it was not read: missing, not a regular file, unreadable); a report that the
// file changed meanwhile replaces its report afterwards. A file `alone` that is not a regular
// file is validated as validate_file does (a stream); in a set it is unreadable.
void visit_shard(SetShard& shard, bool alone, const Options& options, const ShardProgress& progress,
                 const std::function<void(FileIndex*)>& use);

// Shards after the first of a set whose later shards are all URLs are fetched this many at a
// time; others one after another.
inline constexpr std::size_t kShardFetches = 4;

// Reads shards[1..] (their reports, split keys and tensor skeletons). A shard by URL not begun
// by options.remote.deadline is not fetched (SetShard::not_fetched). `stopped` is set when a
// data scan was interrupted, and no further shard is begun then.
void visit_later_shards(std::vector<SetShard>& shards, const Options& options,
                        const ShardProgress& progress, std::atomic<bool>& stopped);

// How many shards of a set by URL to fetch: the first shard's split.count when it is a uint16
// (at least 1, at most the `named` count its name says), else `named`.
[[nodiscard]] std::size_t shards_to_fetch(const SetShard& first, std::size_t named);

// The report of shards[first] says that the shards first..last were not fetched.
void name_unfetched_run(Report& report, const std::vector<SetShard>& shards, std::size_t first,
                        std::size_t last, const RemoteOptions& options);

}  // namespace ggufcheck::detail
