#include "llama_loader/token_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <span>
#include <system_error>

#if defined(__GLIBC__)
#include <sched.h>
#endif

#include "index/keys.hpp"
#include "util/duplicates.hpp"

namespace ggufcheck::detail {

std::string empty_token_name(std::uint64_t index) {
  return fmt::format("[EMPTY_{}]", index);
}

std::optional<std::uint64_t> empty_token_index(std::string_view text) {
  constexpr std::string_view kOpen = "[EMPTY_";
  if (!text.starts_with(kOpen) || text.size() < kOpen.size() + 2 || text.back() != ']') {
    return std::nullopt;
  }
  const std::string_view digits = text.substr(kOpen.size(), text.size() - kOpen.size() - 1);
  if (digits.size() > 10 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  std::uint64_t value = 0;
  for (const char d : digits) {
    if (d < '0' || d > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(d - '0');
  }
  return value;
}

namespace {

// Partitions of 4,096 to 8,191 entries (while there are at most kMaxPartitions of them: the walk
// writes to all at once): a partition's entries (up to 64 KiB) and the table that finds its
// repeats (up to 128 KiB) stay in a core's second-level cache. On the benchmark's vocabulary this
// took less time than partitions of 2,048, 16,384 or 65,536.
constexpr std::uint64_t kPartitionTarget = 4096;
constexpr std::uint64_t kMaxPartitions = 512;
// offset() starts from the offset of every kCheckpointEvery-th token.
constexpr std::uint64_t kCheckpointEvery = 64;
// A probe sequence longer than this sends the index to its ordered map, as util/duplicates.hpp's
// finder: with a seeded hash and a sparse table it does not happen by chance, and whatever the
// texts the work stays bounded.
constexpr std::size_t kMaxProbes = 256;
// Arrays of fewer tokens are indexed inline: a thread costs more than it saves.
constexpr std::uint64_t kThreadMinimum = 16384;

__extension__ typedef unsigned __int128 Wide;

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  const Wide m = static_cast<Wide>(a) * b;
  return static_cast<std::uint64_t>(m) ^ static_cast<std::uint64_t>(m >> 64);
}

// The masks that keep the first n of 32 bytes loaded as four words, n = 0..32.
constexpr std::array<std::array<std::uint64_t, 4>, 33> kTextMasks = [] {
  std::array<std::array<std::uint64_t, 4>, 33> masks{};
  for (std::size_t n = 0; n <= 32; ++n) {
    for (std::size_t byte = 0; byte < n; ++byte) {
      masks[n][byte / 8] |= std::uint64_t{0xff} << (8 * (byte % 8));
    }
  }
  return masks;
}();

// Hashing the texts is a third of the index's work. A text of at most 32 bytes is hashed without a
// branch on its length (the benchmark's vocabulary mixes lengths on both sides of 16 bytes, and
// such a branch cost more than it saved): four masked 8-byte words, the last two folded into the
// first two by odd multipliers drawn from the process's seed, then one 128-bit multiplication.
// The index's bound on its work does not depend on the hash: texts an input could make collide
// only send it to the ordered map. A longer text gets seeded_hash.
std::uint64_t load_word(const char* at) {
  std::uint64_t v = 0;
  std::memcpy(&v, at, 8);
  return v;
}

std::uint64_t hash_words(std::uint64_t w0, std::uint64_t w1, std::uint64_t w2, std::uint64_t w3,
                         std::size_t n, const TokenSeed& seed) {
  const std::array<std::uint64_t, 4>& m = kTextMasks[n];
  return mix((w0 & m[0]) ^ ((w2 & m[2]) * seed.third) ^ seed.first,
             (w1 & m[1]) ^ ((w3 & m[3]) * seed.fourth) ^ n ^ seed.second);
}

// A text of less than 32 readable bytes (near the end of the input, or a text looked up): the
// same value from a copy.
[[gnu::noinline]] std::uint64_t token_hash_copy(std::string_view text, const TokenSeed& seed) {
  std::array<char, 32> copy{};
  std::memcpy(copy.data(), text.data(), text.size());
  return hash_words(load_word(copy.data()), load_word(copy.data() + 8), load_word(copy.data() + 16),
                    load_word(copy.data() + 24), text.size(), seed);
}

[[gnu::always_inline]] inline std::uint64_t token_hash(std::string_view text, const char* end,
                                                       const TokenSeed& seed) {
  const std::size_t n = text.size();
  if (n > 32) [[unlikely]] {
    return seeded_hash(text);
  }
  const char* const at = text.data();
  if (static_cast<std::size_t>(end - at) < 32) [[unlikely]] {
    return token_hash_copy(text, seed);
  }
  return hash_words(load_word(at), load_word(at + 8), load_word(at + 16), load_word(at + 24), n,
                    seed);
}

TokenSeed draw_seed() {
  TokenSeed seed;
  seed.first = seeded_hash("ggufcheck token hash 1");
  seed.second = seeded_hash("ggufcheck token hash 2");
  seed.third = seeded_hash("ggufcheck token hash 3") | 1;
  seed.fourth = seeded_hash("ggufcheck token hash 4") | 1;
  return seed;
}

// The partition of a hash among `partitions`: multiply-shift of its high bits (an entry keeps
// the low 32 as its tag).
[[gnu::always_inline]] inline std::uint64_t partition_in(std::uint64_t hash,
                                                         std::uint64_t partitions) {
  return static_cast<std::uint64_t>((static_cast<Wide>(hash) * partitions) >> 64);
}

// An entry: the low 32 bits of the text's hash (its tag) above the token's index, which is below
// 2^32 - 1.
[[gnu::always_inline]] inline std::uint64_t entry_of(std::uint64_t hash, std::uint64_t j) {
  return (hash << 32) | j;
}
[[gnu::always_inline]] inline std::uint64_t token_of(std::uint64_t entry) {
  return entry & 0xffffffffU;
}
[[gnu::always_inline]] inline std::uint32_t tag_of(std::uint64_t entry) {
  return static_cast<std::uint32_t>(entry >> 32);
}

}  // namespace

TokenIndex::TokenIndex(const Input& input, std::uint64_t first_element, std::uint64_t count,
                       std::uint32_t width, Endian endian, bool cut_at_nul,
                       const std::atomic<bool>* cancel, IndexHash hash_mode,
                       IndexFinish finish_when)
    : elements_offset(first_element),
      c_strings(cut_at_nul),
      input_(input),
      bytes_(input.prefix(input.size())),
      width_(width),
      endian_(endian),
      all_collide_(hash_mode == IndexHash::AllCollide),
      one_partition_(hash_mode == IndexHash::OnePartition) {
  build(count, cancel);
  if (finish_when == IndexFinish::Now) {
    dedupe(0);
    finish();
  }
}

std::uint64_t TokenIndex::offset(std::uint64_t j, WalkPoint& cursor) const {
  if (j < cursor.token || j - cursor.token >= kCheckpointEvery) {
    cursor.token = j / kCheckpointEvery * kCheckpointEvery;
    cursor.offset = checkpoints_[j / kCheckpointEvery];
  }
  // The walk found every token up to walked_ whole: their lengths need no check here.
  for (; cursor.token < j; ++cursor.token) {
    cursor.offset += width_ + input_.number_at(cursor.offset, width_, endian_).value_or(0);
  }
  return cursor.offset;
}

std::uint64_t TokenIndex::offset(std::uint64_t j) const {
  return offset(j, cursor_);
}

std::string_view TokenIndex::text_of(std::uint64_t j, WalkPoint& cursor) const {
  const std::uint64_t at = offset(j, cursor);
  const std::uint64_t length = input_.number_at(at, width_, endian_).value_or(0);
  std::string_view bytes;
  if (!input_.view(at + width_, length, bytes)) return {};
  return c_strings ? c_string_prefix(bytes) : bytes;
}

bool TokenIndex::empty(std::uint64_t j) const {
  return j >= walked_ || text_of(j).empty();
}

// A text looked up need not lie in the input: hashed from a copy (the same value as the walk's).
std::uint64_t TokenIndex::hash(std::string_view text) const {
  if (all_collide_) return 0;
  return token_hash(text, text.data() + text.size(), seed_);
}

std::uint64_t TokenIndex::partition_of(std::uint64_t hash) const {
  return partition_in(hash, one_partition_ ? 1 : partitions_);
}

void TokenIndex::build(std::uint64_t count, const std::atomic<bool>* cancel) {
  static const TokenSeed seed = draw_seed();
  seed_ = seed;
  count_ = count;
  if (elements_offset > bytes_.size()) return;
  // Memory follows the tokens that fit in the input, never the count alone.
  const std::uint64_t fitting =
      std::min<std::uint64_t>(count, (bytes_.size() - elements_offset) / width_);
  // An entry holds a token's index in 32 bits: more tokens (over 32 GB of them) go to the
  // ordered map.
  ordered_mode_ = fitting >= 0xffffffffU;
  if (!ordered_mode_) {
    partitions_ = std::min(kMaxPartitions,
                           std::bit_floor(std::max<std::uint64_t>(1, fitting / kPartitionTarget)));
    // A partition's share and a thirty-second more (250,000 tokens' entries fit in one 2 MiB page):
    // with random hashes three standard deviations, so a partition has more about one time in
    // a thousand, and then a few, which go to spill_.
    const std::uint64_t share = (fitting + partitions_ - 1) / partitions_;
    capacity_ = share + share / 32 + 16;
    entries_ = TableMemory<std::uint64_t>(partitions_ * capacity_);
    fill_.assign(partitions_, 0);
  }
  checkpoints_.resize((fitting + kCheckpointEvery - 1) / kCheckpointEvery);
  const bool swap = endian_ != Endian::Little;
  if (width_ == 8) {
    swap ? walk<8, true>(fitting, cancel) : walk<8, false>(fitting, cancel);
  } else {
    swap ? walk<4, true>(fitting, cancel) : walk<4, false>(fitting, cancel);
  }
  complete = walked_ == count;
  if ((cancel != nullptr && cancel->load(std::memory_order_relaxed)) || ordered_mode_) {
    deduped_ = true;  // cut short: nothing to find; over 2^32 tokens: finish() maps them
    return;
  }
  // Entries past a buffer were spilled in token order; grouped by partition, still in order.
  std::stable_sort(spill_.begin(), spill_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

template <std::uint32_t Width, bool Swap>
void TokenIndex::walk(std::uint64_t fitting, const std::atomic<bool>* cancel) {
  // The hash reads whole words, past a short text's end but never past the input's.
  const char* const end = bytes_.data() + bytes_.size();
  std::uint64_t* const checkpoints = checkpoints_.data();
  std::uint64_t* const entries = entries_.data();
  std::uint64_t* const fill = fill_.data();
  const std::uint64_t capacity = capacity_;
  const bool hashed = !ordered_mode_;
  // Locals, not members: the compiler cannot keep a member in a register across the stores below.
  const TokenSeed seed = seed_;
  const bool all_collide = all_collide_;
  const bool cut_at_nul = c_strings;
  const std::uint64_t partitions = one_partition_ ? 1 : partitions_;
  // Entries are dealt a batch at a time, after the texts are hashed: dealt as each is hashed,
  // the load of a partition's count waited for the stores before it, whose addresses hung on
  // the hashes (the index took twice as long).
  constexpr std::size_t kBatch = 32;
  std::array<std::uint64_t, kBatch> hashes{};
  std::array<std::uint64_t, kBatch> tokens{};
  std::size_t batched = 0;
  const auto deal = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t h = hashes[i];
      const std::uint64_t p = partition_in(h, partitions);
      const std::uint64_t n = fill[p]++;
      if (n < capacity) [[likely]] {
        entries[p * capacity + n] = entry_of(h, tokens[i]);
      } else {
        spill_.emplace_back(p, entry_of(h, tokens[i]));
      }
    }
  };
  constexpr std::uint64_t kReadAhead = 1024;
  std::uint64_t walked = 0;
  StringArrayWalk<Width, Swap> strings(bytes_, elements_offset);
  for (std::uint64_t j = 0; j < fitting; ++j) {
    if ((j & 4095) == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) break;
    // The texts a few cache lines ahead, as the reader does.
    strings.prefetch(kReadAhead);
    const std::uint64_t at = strings.offset();
    std::string_view text;
    if (!strings.next(text)) break;
    if (cut_at_nul) text = c_string_prefix(text);
    if (j % kCheckpointEvery == 0) checkpoints[j / kCheckpointEvery] = at;
    ++walked;
    if (text.empty()) continue;
    if (text[0] == '[') [[unlikely]] {
      note_named_empty(j, text);
    }
    if (!hashed) continue;
    hashes[batched] = all_collide ? 0 : token_hash(text, end, seed);
    tokens[batched] = j;
    if (++batched == kBatch) {
      deal(batched);
      batched = 0;
    }
  }
  walked_ = walked;
  if (!hashed) return;
  deal(batched);
}

void TokenIndex::note_named_empty(std::uint64_t j, std::string_view text) {
  if (const auto k = empty_token_index(text); k && *k < count_) named_empty_.emplace_back(j, *k);
}

template <typename Visit>
void TokenIndex::for_each_entry(std::uint64_t p, Visit&& visit) const {
  const std::uint64_t* const first = entries_.data() + p * capacity_;
  const std::uint64_t buffered = std::min(fill_[p], capacity_);
  for (std::uint64_t i = 0; i < buffered; ++i) {
    if (!visit(first[i])) return;
  }
  if (fill_[p] <= capacity_) return;
  auto it = std::lower_bound(spill_.begin(), spill_.end(), p,
                             [](const auto& s, std::uint64_t q) { return s.first < q; });
  for (; it != spill_.end() && it->first == p; ++it) {
    if (!visit(it->second)) return;
  }
}

void TokenIndex::dedupe(unsigned worker) {
  if (deduped_) return;
  std::vector<std::uint16_t> small;
  std::vector<std::uint32_t> large;
  std::vector<std::uint64_t> joined;
  WalkPoint cursor;
  std::vector<std::pair<std::uint64_t, std::uint64_t>>& found = found_[worker];
  while (!unbounded_.load(std::memory_order_relaxed)) {
    const std::uint64_t p = next_partition_.fetch_add(1, std::memory_order_relaxed);
    if (p >= partitions_) return;
    // A slot holds a position in the partition plus one: 2 bytes do unless the texts collide.
    const bool bounded = fill_[p] < 0xffff ? dedupe_partition(p, small, joined, cursor, found)
                                           : dedupe_partition(p, large, joined, cursor, found);
    if (!bounded) unbounded_.store(true, std::memory_order_relaxed);
  }
}

void TokenIndex::finish() {
  if (finished_) return;
  finished_ = true;
  if (!deduped_) {
    deduped_ = true;
    if (unbounded_.load(std::memory_order_relaxed)) {
      // A probe sequence too long: every token again, in the ordered map.
      ordered_mode_ = true;
      entries_ = TableMemory<std::uint64_t>();
      std::vector<std::uint64_t>().swap(fill_);
      spill_.clear();
    } else {
      // Found partition by partition: in token order, as the ordered map finds them.
      duplicates = std::move(found_[0]);
      duplicates.insert(duplicates.end(), found_[1].begin(), found_[1].end());
      std::sort(duplicates.begin(), duplicates.end());
    }
    found_ = {};
  }
  if (ordered_mode_) build_ordered();
  note_lookalikes();
}

// The repeats among partition p's entries (in token order): an open-addressing table of eight
// to sixteen slots an entry, each the position of an entry plus one (zero when empty), probed
// from the entry's tag. So sparse a table rarely has an entry's first slot taken, the branch a
// half-full one mispredicts an insert in four.
template <typename Slot>
bool TokenIndex::dedupe_partition(std::uint64_t p, std::vector<Slot>& table_memory,
                                  std::vector<std::uint64_t>& joined, WalkPoint& cursor,
                                  std::vector<std::pair<std::uint64_t, std::uint64_t>>& found) {
  const std::uint64_t n = fill_[p];
  if (n < 2) return true;
  const std::uint64_t* list = entries_.data() + p * capacity_;
  if (n > capacity_) [[unlikely]] {  // its buffer, then its spill
    joined.clear();
    for_each_entry(p, [&](std::uint64_t e) {
      joined.push_back(e);
      return true;
    });
    list = joined.data();
  }
  const std::size_t slots = std::bit_ceil(static_cast<std::size_t>(8 * n));
  if (table_memory.size() < slots) table_memory.resize(slots);
  Slot* const table = table_memory.data();
  std::fill_n(table, slots, Slot{0});
  const std::size_t mask = slots - 1;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t e = list[i];
    const std::uint32_t tag = tag_of(e);
    std::size_t slot = tag & mask;
    for (std::size_t probes = 0;; ++probes) {
      const Slot held = table[slot];
      if (held == 0) [[likely]] {
        table[slot] = static_cast<Slot>(i + 1);
        break;
      }
      const std::uint64_t other = list[held - 1];
      if (tag_of(other) == tag && text_of(token_of(other), cursor) == text_of(token_of(e), cursor))
          [[unlikely]] {
        found.emplace_back(token_of(e), token_of(other));
        break;
      }
      if (probes == kMaxProbes) [[unlikely]]
        return false;
      slot = (slot + 1) & mask;
    }
  }
  return true;
}

void TokenIndex::build_ordered() {
  for (std::uint64_t j = 0; j < walked_; ++j) {
    const std::string_view text = text_of(j);
    if (text.empty()) continue;
    const auto [it, inserted] = ordered_.try_emplace(text, j);
    if (!inserted) duplicates.emplace_back(j, it->second);
  }
}

// The tokens named like an empty token that are the first with their text (duplicates is in
// token order).
void TokenIndex::note_lookalikes() {
  for (const auto& [j, k] : named_empty_) {
    const auto repeat = std::lower_bound(duplicates.begin(), duplicates.end(),
                                         std::pair<std::uint64_t, std::uint64_t>{j, 0});
    if (repeat == duplicates.end() || repeat->first != j) lookalikes.emplace_back(j, k);
  }
}

std::optional<std::uint64_t> TokenIndex::find(std::string_view text) const {
  if (text.empty()) return std::nullopt;
  if (ordered_mode_) {
    const auto it = ordered_.find(text);
    if (it == ordered_.end()) return std::nullopt;
    return it->second;
  }
  if (fill_.empty()) return std::nullopt;
  const std::uint64_t h = hash(text);
  const std::uint32_t tag = static_cast<std::uint32_t>(h);
  // The partition's entries in token order: the first with the text is the first token with it.
  std::optional<std::uint64_t> found;
  for_each_entry(partition_of(h), [&](std::uint64_t e) {
    if (tag_of(e) == tag && text_of(token_of(e)) == text) found = token_of(e);
    return !found;
  });
  return found;
}

TokenIndexTask::TokenIndexTask(const Input& input, std::uint64_t array_offset,
                               std::uint64_t elements_offset, std::uint64_t count,
                               std::uint32_t width, Endian endian)
    : input_(input),
      array_offset_(array_offset),
      elements_offset_(elements_offset),
      count_(count),
      width_(width),
      endian_(endian) {
  pthread_attr_t attributes;
  if (const int error = pthread_attr_init(&attributes); error != 0) {
    throw std::system_error(error, std::generic_category(), "pthread_attr_init");
  }
#if defined(__GLIBC__)
  // Any core this process may use but the current one, when there is one.
  cpu_set_t others;
  CPU_ZERO(&others);
  const int cpu = sched_getcpu();
  const auto here = static_cast<std::size_t>(cpu);
  if (cpu >= 0 && sched_getaffinity(0, sizeof others, &others) == 0 && CPU_ISSET(here, &others) &&
      CPU_COUNT(&others) > 1) {
    CPU_CLR(here, &others);
    (void)pthread_attr_setaffinity_np(&attributes, sizeof others, &others);
  }
#endif
  const int error = pthread_create(&thread_, &attributes, &TokenIndexTask::run, this);
  (void)pthread_attr_destroy(&attributes);
  if (error != 0) throw std::system_error(error, std::generic_category(), "pthread_create");
  running_ = true;
}

void* TokenIndexTask::run(void* opaque) {
  auto* const task = static_cast<TokenIndexTask*>(opaque);
#if defined(__GLIBC__)
  // Started away from the reader; from now on wherever the scheduler likes (the process's own
  // affinity, as its other threads have).
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    (void)pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
  }
#endif
  try {
    task->index_.emplace(task->input_, task->elements_offset_, task->count_, task->width_,
                         task->endian_, false, &task->cancel_, IndexHash::Seeded,
                         IndexFinish::Later);
  } catch (...) {  // out of memory: the check indexes inline, and fails there if it must
    task->index_.reset();
  }
  task->done_walking();
  if (!task->index_) return nullptr;
  try {
    task->index_->dedupe(0);
  } catch (...) {
    task->failed_ = true;
  }
  return nullptr;
}

void TokenIndexTask::done_walking() {
  walked_.store(true, std::memory_order_release);
  walked_.notify_one();
}

void TokenIndexTask::join() {
  if (!running_) return;
  (void)pthread_join(thread_, nullptr);
  running_ = false;
}

TokenIndexTask::~TokenIndexTask() {
  cancel_.store(true, std::memory_order_relaxed);
  join();
}

const TokenIndex* TokenIndexTask::get(std::uint64_t array_offset) {
  if (!running_ && !index_) return nullptr;  // asked once already, and failed
  // The reader is done: its thread takes partitions too, once the walk is.
  bool helped_failed = false;
  if (running_) {
    walked_.wait(false, std::memory_order_acquire);
    if (index_ && array_offset == array_offset_) {
      try {
        index_->dedupe(1);
      } catch (...) {
        helped_failed = true;
      }
    }
    join();
  }
  if (array_offset != array_offset_ || !index_ || failed_ || helped_failed) {
    index_.reset();
    return nullptr;
  }
  index_->finish();
  return &*index_;
}

void TokenIndexObserver::on_string_array(const FileIndex& index, std::string_view key,
                                         std::uint64_t array_offset, std::uint64_t elements_offset,
                                         std::uint64_t count) {
  if (c_string_prefix(key) != "tokenizer.ggml.tokens" || task_ || count < kThreadMinimum) return;
  if (index.dialect != Dialect{}) return;  // writer diagnosis re-reads: no model checks follow
  try {
    task_ = std::make_unique<TokenIndexTask>(index.input, array_offset, elements_offset, count,
                                             index.size_width(), index.endian);
  } catch (const std::system_error&) {  // no thread to be had: the check indexes inline
  }
}

}  // namespace ggufcheck::detail
