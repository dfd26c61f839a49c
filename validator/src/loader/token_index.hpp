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

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "util/table_memory.hpp"

namespace ggufcheck::detail {

// The name llama.cpp gives an empty token (load(): "[EMPTY_" + std::to_string(i) + "]"), and
// the index a text of that form names, if any.
[[nodiscard]] std::string empty_token_name(std::uint64_t index);
[[nodiscard]] std::optional<std::uint64_t> empty_token_index(std::string_view text);

// A probe of 16 slots of the index's table: bit i is set in `empty` when slot i is empty, in
// `tags` when it is taken and its bits under tag_bits equal tag. match_group uses the
// processor's vector compares where it has them; match_group_scalar is the same, slot by slot
// (the tests hold one to the other).
struct GroupMatch {
  std::uint32_t empty = 0;
  std::uint32_t tags = 0;
};
[[nodiscard]] GroupMatch match_group(const std::uint32_t* group, std::uint32_t tag,
                                     std::uint32_t tag_bits);
[[nodiscard]] GroupMatch match_group_scalar(const std::uint32_t* group, std::uint32_t tag,
                                            std::uint32_t tag_bits);

class TokenIndex {
 public:
  // Walks `count` strings (a length of `width` bytes in `endian` order, then the bytes) from
  // `elements_offset` of `input`, stopping where one does not fit. c_strings: a text is its bytes
  // up to the first NUL, as llama.cpp reads it (gguf_get_arr_str), else all of them. Stops early,
  // incomplete, when *cancel becomes true.
  // all_collide: every text gets the same hash (the tests' way to the ordered map).
  TokenIndex(const Input& input, std::uint64_t elements_offset, std::uint64_t count,
             std::uint32_t width, Endian endian, bool c_strings,
             const std::atomic<bool>* cancel = nullptr, bool all_collide = false);

  // True once a long probe sequence sent the index to its ordered map (for the tests).
  [[nodiscard]] bool ordered() const { return ordered_mode_; }

  std::uint64_t elements_offset = 0;
  bool c_strings = false;
  bool complete = false;  // all `count` tokens were walked
  // Each walked token's string: the offset of its length field.
  [[nodiscard]] std::span<const std::uint64_t> offsets() const {
    return {offsets_.data(), walked_};
  }
  // (j, i): token j's text is that of the earlier token i, the first with it.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> duplicates;
  // (j, k): token j, the first with its text, has the text "[EMPTY_k]", k < count.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lookalikes;

  // Whether token j was walked and has an empty text (llama.cpp names it "[EMPTY_j]").
  [[nodiscard]] bool empty(std::uint64_t j) const;
  // The first token with this (non-empty) text.
  [[nodiscard]] std::optional<std::uint64_t> find(std::string_view text) const;

 private:
  [[nodiscard]] std::string_view text_of(std::uint64_t j) const;
  [[nodiscard]] std::uint64_t hash(std::string_view text) const;
  [[nodiscard]] std::size_t group_of(std::uint64_t hash) const;
  [[nodiscard]] std::uint32_t tag_of(std::uint64_t hash) const;
  // The token of a taken slot.
  [[nodiscard]] std::uint64_t token_at(std::size_t slot) const;
  static constexpr std::size_t kNoSlot = SIZE_MAX;
  struct Probe {
    bool found = false;  // slot holds an equal text; else slot is an empty one, or kNoSlot
    std::size_t slot = kNoSlot;
  };
  [[nodiscard]] Probe probe(std::string_view text, std::size_t group, std::uint32_t tag) const;
  void build(std::uint64_t count, const std::atomic<bool>* cancel);
  template <std::uint32_t Width, bool Swap>
  void walk(std::uint64_t fitting, const std::atomic<bool>* cancel);
  void insert(std::uint64_t j, std::string_view text, std::size_t group, std::uint32_t tag);
  void insert_ordered(std::uint64_t j, std::string_view text);
  void fall_back_to_ordered(std::uint64_t j, std::string_view text);
  void lookalike(std::uint64_t j, std::string_view text);

  Input input_;
  std::string_view bytes_;  // all of the input's
  std::uint32_t width_ = 8;
  Endian endian_ = Endian::Little;
  std::uint64_t count_ = 0;  // the array's count (a lookalike's k is below it)
  std::uint64_t seed_ = 0;   // the process's hash seed
  bool all_collide_ = false;
  unsigned index_bits_ = 0;
  std::uint32_t index_mask_ = 0;
  // An open-addressing table of groups of 16 slots, each a tag and a token index plus one (zero:
  // empty), at most half full, and the ordered map it falls back to after a probe sequence of
  // 16 full groups (util/duplicates.hpp says why the work stays bounded whatever the hashes).
  std::uint64_t groups_ = 0;
  TableMemory<std::uint32_t> slots_;
  TableMemory<std::uint64_t> offsets_;
  std::uint64_t walked_ = 0;
  bool ordered_mode_ = false;
  std::map<std::string_view, std::uint64_t, std::less<>> ordered_;
};

// The index being built on another thread; the destructor stops and joins it.
class TokenIndexTask {
 public:
  TokenIndexTask(const Input& input, std::uint64_t array_offset, std::uint64_t elements_offset,
                 std::uint64_t count, std::uint32_t width, Endian endian);
  ~TokenIndexTask();
  TokenIndexTask(const TokenIndexTask&) = delete;
  TokenIndexTask& operator=(const TokenIndexTask&) = delete;

  // The index of the array whose value starts at array_offset (its element type), once built;
  // nullptr when this task indexed another array or failed.
  [[nodiscard]] const TokenIndex* get(std::uint64_t array_offset);

 private:
  std::uint64_t array_offset_;
  std::atomic<bool> cancel_{false};
  std::optional<TokenIndex> index_;
  std::thread thread_;
};

// The reader's hook (Model::on_string_array): starts a TokenIndexTask for the vocabulary's token
// array when it is big enough to be worth a thread.
void start_token_index(Model& model, std::string_view key, std::uint64_t array_offset,
                       std::uint64_t elements_offset, std::uint64_t count);

}  // namespace ggufcheck::detail
