// The token texts of a vocabulary, indexed once for the vocabulary check (vocab.cpp): where each
// token's string is, which are empty, which repeat an earlier token's text as llama.cpp keys its
// token_to_id map, and which have the text "[EMPTY_k]" llama.cpp gives an empty token k.
//
// Indexing 250,000 tokens costs more than reading the rest of a tokenizer's metadata, so the
// reader starts it on another thread as soon as it meets the array's first token
// (start_token_index, installed by validate_input when the model checks run and a thread is
// free), and the vocabulary check takes the result: the index is built while the reader checks
// the rest of the file. The thread reads the bytes before the reader has judged them; every read
// is bounded by the input, and the check uses the index only when the reader found the array
// well formed and clean (every text as stored is the text llama.cpp keys), so the result is the
// same as indexing inline.
#pragma once

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "index/file_index.hpp"
#include "read/reader.hpp"
#include "util/table_memory.hpp"

namespace ggufcheck::detail {

// The name llama.cpp gives an empty token (load(): "[EMPTY_" + std::to_string(i) + "]"), and
// the index a text of that form names, if any.
[[nodiscard]] std::string empty_token_name(std::uint64_t index);
[[nodiscard]] std::optional<std::uint64_t> empty_token_index(std::string_view text);

// The process's seed of the index's hash (token_index.cpp).
struct TokenSeed {
  std::uint64_t first = 0;   // xored into a text's first word
  std::uint64_t second = 0;  // and its second
  std::uint64_t third = 1;   // odd multipliers of its third word
  std::uint64_t fourth = 1;  // and its fourth
};

// How the index hashes: as it does, or, for the tests, every text alike (the way to its ordered
// map), or every text to the first partition (the way to its spill).
enum class IndexHash { Seeded, AllCollide, OnePartition };

// When the index finds the repeats: in its constructor, or later, by dedupe() on one or two
// threads and then finish() (TokenIndexTask: the reader's thread helps once it is done reading).
enum class IndexFinish { Now, Later };

class TokenIndex {
 public:
  // Walks `count` strings (a length of `width` bytes in `endian` order, then the bytes) from
  // `elements_offset` of `input`, stopping where one does not fit. c_strings: a text is its bytes
  // up to the first NUL, as llama.cpp reads it (gguf_get_arr_str), else all of them. Stops early,
  // incomplete, when *cancel becomes true.
  // hash_mode: IndexHash::Seeded but in the tests.
  TokenIndex(const Input& input, std::uint64_t elements_offset, std::uint64_t count,
             std::uint32_t width, Endian endian, bool c_strings,
             const std::atomic<bool>* cancel = nullptr, IndexHash hash_mode = IndexHash::Seeded,
             IndexFinish finish = IndexFinish::Now);
  TokenIndex(const TokenIndex&) = delete;
  TokenIndex& operator=(const TokenIndex&) = delete;

  // With IndexFinish::Later: the repeats of the partitions no other call took, worker 0 or 1
  // (at most one call of each, on any threads at once); then finish(), after both (a second
  // call does nothing).
  void dedupe(unsigned worker);
  void finish();

  // True once a long probe sequence sent the index to its ordered map (for the tests).
  [[nodiscard]] bool ordered() const { return ordered_mode_; }
  // True when a partition had more entries than its buffer holds (for the tests).
  [[nodiscard]] bool spilled() const { return !spill_.empty(); }

  std::uint64_t elements_offset = 0;
  bool c_strings = false;
  bool complete = false;  // all `count` tokens were walked
  // The tokens walked, and the offset of token j's string (its length field), j < walked().
  // Found from the offset of every 64th token kept by the walk: consecutive and nearby tokens
  // cost a step or two, any other at most 63.
  [[nodiscard]] std::uint64_t walked() const { return walked_; }
  [[nodiscard]] std::uint64_t offset(std::uint64_t j) const;
  // (j, i): token j's text is that of the earlier token i, the first with it.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> duplicates;
  // (j, k): token j, the first with its text, has the text "[EMPTY_k]", k < count.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lookalikes;

  // Whether token j was walked and has an empty text (llama.cpp names it "[EMPTY_j]").
  [[nodiscard]] bool empty(std::uint64_t j) const;
  // The first token with this (non-empty) text.
  [[nodiscard]] std::optional<std::uint64_t> find(std::string_view text) const;

 private:
  // Where offset() starts from: the last token it found (none yet: a checkpoint).
  struct WalkPoint {
    std::uint64_t token = UINT64_MAX;
    std::uint64_t offset = 0;
  };
  [[nodiscard]] std::uint64_t offset(std::uint64_t j, WalkPoint& cursor) const;
  [[nodiscard]] std::string_view text_of(std::uint64_t j, WalkPoint& cursor) const;
  [[nodiscard]] std::string_view text_of(std::uint64_t j) const { return text_of(j, cursor_); }
  [[nodiscard]] std::uint64_t hash(std::string_view text) const;
  [[nodiscard]] std::uint64_t partition_of(std::uint64_t hash) const;
  void build(std::uint64_t count, const std::atomic<bool>* cancel);
  template <std::uint32_t Width, bool Swap>
  void walk(std::uint64_t fitting, const std::atomic<bool>* cancel);
  // Partition p's entries, in token order: those of its buffer, then those it spilled.
  template <typename Visit>
  void for_each_entry(std::uint64_t p, Visit&& visit) const;
  // The repeats among partition p's entries, into `found`; false when a probe sequence grew too
  // long.
  template <typename Slot>
  [[nodiscard]] bool dedupe_partition(std::uint64_t p, std::vector<Slot>& table,
                                      std::vector<std::uint64_t>& joined, WalkPoint& cursor,
                                      std::vector<std::pair<std::uint64_t, std::uint64_t>>& found);
  [[gnu::noinline]] void note_named_empty(std::uint64_t j, std::string_view text);
  void build_ordered();
  void note_lookalikes();

  Input input_;
  std::string_view bytes_;  // all of the input's
  std::uint32_t width_ = 8;
  Endian endian_ = Endian::Little;
  std::uint64_t count_ = 0;  // the array's count (a lookalike's k is below it)
  bool all_collide_ = false;
  bool one_partition_ = false;
  TokenSeed seed_;
  std::uint64_t walked_ = 0;
  std::vector<std::uint64_t> checkpoints_;  // the offset of tokens 0, 64, 128, ...
  mutable WalkPoint cursor_;                // offset()'s, once the index is finished
  // The walk deals each non-empty token's entry (the low 32 bits of its text's hash above the
  // token's index) to one of `partitions_` buffers by the hash's high bits; the repeats are then
  // found one partition at a time, in a table that stays in the cache (a table of all the
  // tokens outgrows it at 250,000 tokens: a miss a token). A buffer holds `capacity_` entries;
  // the few a partition has beyond them go to spill_ (partition, entry), in token order.
  std::uint64_t partitions_ = 1;
  std::uint64_t capacity_ = 0;
  TableMemory<std::uint64_t> entries_;
  std::vector<std::uint64_t> fill_;  // entries dealt to each partition
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spill_;
  // The tokens whose text reads "[EMPTY_k]", k < count: lookalikes unless they repeat a text.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> named_empty_;
  // dedupe(): the next partition to take, whether a probe sequence grew too long, each worker's
  // repeats.
  std::atomic<std::uint64_t> next_partition_{0};
  std::atomic<bool> unbounded_{false};
  std::array<std::vector<std::pair<std::uint64_t, std::uint64_t>>, 2> found_;
  bool deduped_ = false;  // the repeats are found (or the walk was cut short: none to find)
  bool finished_ = false;
  bool ordered_mode_ = false;
  std::map<std::string_view, std::uint64_t, std::less<>> ordered_;
};

// The index being built on another thread; the destructor stops and joins it.
//
// The thread is started on a core other than the reader's and then allowed everywhere again.
// Left to the scheduler, a new thread was queued behind its creator on the same core about half
// the time, and started only at the next scheduler tick, 3 to 4 ms later on the CI machine:
// longer than the whole read of a 16 MB tokenizer file.
class TokenIndexTask {
 public:
  // Throws std::system_error when no thread can be had.
  TokenIndexTask(const Input& input, std::uint64_t array_offset, std::uint64_t elements_offset,
                 std::uint64_t count, std::uint32_t width, Endian endian);
  ~TokenIndexTask();
  TokenIndexTask(const TokenIndexTask&) = delete;
  TokenIndexTask& operator=(const TokenIndexTask&) = delete;

  // The index of the array whose value starts at array_offset (its element type), once built;
  // nullptr when this task indexed another array or failed.
  [[nodiscard]] const TokenIndex* get(std::uint64_t array_offset);

 private:
  static void* run(void* task);
  void join();
  void done_walking();

  Input input_;
  std::uint64_t array_offset_;
  std::uint64_t elements_offset_;
  std::uint64_t count_;
  std::uint32_t width_;
  Endian endian_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> walked_{false};  // index_ is walked (or failed): get() may help it on
  bool failed_ = false;              // out of memory on the index's thread
  std::optional<TokenIndex> index_;
  pthread_t thread_{};
  bool running_ = false;
};

// What the reader is given to watch for the vocabulary's token array (read/reader.hpp): it starts
// a TokenIndexTask for it when it is big enough to be worth a thread, and hands its index to the
// vocabulary check (check_vocabulary) afterwards. The task is stopped and joined when this goes.
class TokenIndexObserver final : public StringArrayObserver {
 public:
  void on_string_array(const FileIndex& index, std::string_view key, std::uint64_t array_offset,
                       std::uint64_t elements_offset, std::uint64_t count) override;
  // The index of the string array whose value starts at array_offset, once built (waiting for or
  // helping the thread); nullptr when no task indexed that array or it failed.
  [[nodiscard]] const TokenIndex* get(std::uint64_t array_offset) {
    return task_ ? task_->get(array_offset) : nullptr;
  }

 private:
  std::unique_ptr<TokenIndexTask> task_;
};

}  // namespace ggufcheck::detail
