#include "hash/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>

#include "ggufcheck/render.hpp"
#include "util/worker_pool.hpp"

namespace ggufcheck::detail {

namespace {

// Lanes: a digest and the run of pieces it reads in order. 0..3 run over every tensor of the
// model (xxh64, sha1, sha256, and the SHA-1 of the UUID); 4..6 over one segment (xxh64, sha1,
// sha256; a header has lane 6 only); 7 over every gap of one file (sha256).
constexpr unsigned kModelLanes = 4;
constexpr unsigned kLanes = 8;
constexpr unsigned kUuidLane = 3;
constexpr unsigned kGapLane = 7;
constexpr std::array<DigestKind, kLanes> kLaneKind = {
    DigestKind::Xxh64, DigestKind::Sha1, DigestKind::Sha256, DigestKind::Sha1,
    DigestKind::Xxh64, DigestKind::Sha1, DigestKind::Sha256, DigestKind::Sha256};
constexpr std::uint8_t kSegmentMask = 0x70;

std::uint8_t bit(unsigned lane) {
  return static_cast<std::uint8_t>(1U << lane);
}

}  // namespace

struct HashEngine::Impl {
  // One buffer of the ring and the piece it holds.
  struct Slot {
    enum class State : std::uint8_t { Free, Reading, Loaded };
    State state = State::Free;
    std::size_t segment = 0;
    std::uint64_t piece = 0;        // within its segment
    std::uint64_t model_piece = 0;  // among the tensor pieces of the model (model lanes' order)
    std::uint64_t gap_piece = 0;    // among the gap pieces of the file (the gap lane's order)
    std::uint64_t at = 0;
    std::uint64_t length = 0;
    bool last = false;  // the segment's last piece
    std::uint8_t pending = 0;
    std::uint8_t running = 0;
    // Allocated when first needed, as large as the pieces it held (at most kChunk), and not
    // zeroed: a small model costs what it reads, not the ring's whole size.
    std::unique_ptr<std::uint8_t[]> buffer;
    std::size_t capacity = 0;
  };
  // The digests of one segment in flight (at most one per slot).
  struct Open {
    std::array<std::optional<Digest>, kLanes> digests;
    std::array<std::uint64_t, kLanes> next{};  // the next piece each lane reads
    std::uint8_t lanes = 0;                    // lanes not yet finished
  };

  const HashOptions& options;
  std::uint8_t model_lanes = 0;
  std::uint8_t tensor_lanes = 0;
  std::array<std::optional<Digest>, kModelLanes> model;
  std::array<std::uint64_t, kModelLanes> model_next{};
  std::uint64_t model_pieces = 0;    // tensor pieces handed out so far, over every file
  unsigned threads;                  // o.threads, 0 resolved to one per core
  std::unique_ptr<WorkerPool> pool;  // started by the first run with work for more than one
  std::vector<Slot> slots;
  bool stopped = false;

  Impl(const HashOptions& o, bool uuid)
      : options(o), threads(o.threads == 0 ? WorkerPool::default_threads() : o.threads) {
    const HashAlgorithms& a = o.algorithms;
    const bool whole = o.whole_model;
    const std::array<bool, kModelLanes> wanted = {whole && a.xxh64, whole && a.sha1,
                                                  whole && a.sha256, uuid};
    for (unsigned lane = 0; lane < kModelLanes; ++lane) {
      if (!wanted[lane]) continue;
      model_lanes = static_cast<std::uint8_t>(model_lanes | bit(lane));
      model[lane].emplace(kLaneKind[lane]);
    }
    if (uuid)
      model[kUuidLane]->update(kLlamaCppUuidNamespace.data(), kLlamaCppUuidNamespace.size());
    if (o.per_tensor || o.manifest) {
      if (a.xxh64 && o.per_tensor) tensor_lanes = static_cast<std::uint8_t>(tensor_lanes | bit(4));
      if (a.sha1 && o.per_tensor) tensor_lanes = static_cast<std::uint8_t>(tensor_lanes | bit(5));
      // The manifest's Merkle root is over the per-tensor sha256.
      if ((a.sha256 && o.per_tensor) || o.manifest) {
        tensor_lanes = static_cast<std::uint8_t>(tensor_lanes | bit(6));
      }
    }
    // A few pieces per thread in flight: enough that no thread waits for a read, bounded.
    const std::size_t count = std::clamp<std::size_t>(std::size_t{4} * threads, 8, 64);
    slots.resize(count);
  }

  [[nodiscard]] bool cancel_requested() const {
    return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed);
  }

  std::optional<std::string> run(const Input& input, const std::string& path,
                                 const std::vector<Segment>& segments, HashResult& result);
};

std::optional<std::string> HashEngine::Impl::run(const Input& input, const std::string& path,
                                                 const std::vector<Segment>& given,
                                                 HashResult& result) {
  // The segments some lane reads: a tensor's bytes when no digest is asked of them (no
  // algorithm, or none per tensor and none over the model) are not read at all, since a piece no
  // lane reads would hold its buffer forever and the reader would wait for it.
  std::vector<Segment> segments;
  for (const Segment& s : given) {
    if (s.kind != Segment::Kind::Tensor || (model_lanes | tensor_lanes) != 0) segments.push_back(s);
  }
  if (segments.empty() || stopped) return std::nullopt;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::size_t, Open> open;  // by segment
  // The file's gaps (the bytes of its data section outside every tensor), one digest in order.
  std::optional<Digest> gaps;
  std::size_t gap_file = 0;
  std::uint64_t gap_pieces = 0, gap_next = 0;
  for (const Segment& s : segments) {
    if (s.kind == Segment::Kind::Gap && !gaps) {
      gaps.emplace(DigestKind::Sha256);
      gap_file = s.index;
    }
  }
  std::optional<std::string> error;
  // The reader's place: the next piece to hand out.
  std::size_t next_segment = 0;
  std::uint64_t next_offset = 0;  // within the segment
  std::uint64_t next_piece = 0;
  const auto all_read = [&] { return next_segment >= segments.size(); };

  // Threads only for work that spreads over them: a piece or two (a small model, say one of a
  // thousand in a manifest) is hashed on this thread, with no thread started or woken.
  std::uint64_t total = 0;
  {
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (const Segment& s : segments) {
      lo = std::min(lo, s.begin);
      hi = std::max(hi, s.begin + s.length);
      total += s.length;  // the segments lie inside the file: no wrap
    }
    if (hi > lo) input.advise_sequential_reads(lo, hi - lo);
  }
  const bool parallel = threads > 1 && total > 2 * HashEngine::kChunk;
  if (parallel && !pool) pool = std::make_unique<WorkerPool>(threads);
  const std::size_t workers = parallel ? pool->size() : 1;

  const auto lanes_of = [&](const Segment& s) -> std::uint8_t {
    if (s.kind == Segment::Kind::Header) return bit(6);
    if (s.kind == Segment::Kind::Gap) return bit(kGapLane);
    return static_cast<std::uint8_t>(model_lanes | tensor_lanes);
  };
  // Whether `lane` may read the piece in `slot` now: the lane read every piece before it.
  const auto ready = [&](const Slot& slot, unsigned lane) {
    if ((slot.pending & bit(lane)) == 0 || (slot.running & bit(lane)) != 0) return false;
    if (lane < kModelLanes) return slot.model_piece == model_next[lane];
    if (lane == kGapLane) return slot.gap_piece == gap_next;
    return open.at(slot.segment).next[lane] == slot.piece;
  };

  const std::function<void(unsigned)> job = [&](unsigned) {
    std::unique_lock lock(mutex);
    for (;;) {
      if (cancel_requested() && !stopped) {
        stopped = true;
        changed.notify_all();
      }
      if (stopped || error) return;
      // The oldest piece a lane can read, and whether a buffer is free for the next read.
      Slot* task = nullptr;
      unsigned task_lane = 0;
      std::size_t loaded = 0;
      Slot* free_slot = nullptr;
      bool busy = false;
      for (Slot& slot : slots) {
        if (slot.state == Slot::State::Free) {
          if (free_slot == nullptr) free_slot = &slot;
          continue;
        }
        busy = true;
        if (slot.state != Slot::State::Loaded) continue;
        ++loaded;
        for (unsigned lane = 0; lane < kLanes; ++lane) {
          if (!ready(slot, lane)) continue;
          const bool older = task == nullptr || slot.segment < task->segment ||
                             (slot.segment == task->segment && slot.piece < task->piece);
          if (older) {
            task = &slot;
            task_lane = lane;
          }
          break;
        }
      }
      const bool can_read = free_slot != nullptr && !all_read();
      if (!busy && !can_read) return;  // every piece read and every lane done
      // Reading first while few pieces wait, so that no thread runs dry.
      if (can_read && (task == nullptr || loaded < workers)) {
        Slot& slot = *free_slot;
        const Segment& segment = segments[next_segment];
        slot.state = Slot::State::Reading;
        slot.segment = next_segment;
        slot.piece = next_piece;
        slot.at = segment.begin + next_offset;
        slot.length = std::min(HashEngine::kChunk, segment.length - next_offset);
        slot.last = next_offset + slot.length >= segment.length;
        slot.pending = lanes_of(segment);
        slot.running = 0;
        if (segment.kind == Segment::Kind::Tensor) slot.model_piece = model_pieces++;
        if (segment.kind == Segment::Kind::Gap) slot.gap_piece = gap_pieces++;
        const auto own = static_cast<std::uint8_t>(slot.pending & kSegmentMask);
        if (next_piece == 0 && own != 0) {
          Open& o = open[next_segment];
          o.lanes = own;
          for (unsigned lane = kModelLanes; lane < kLanes; ++lane) {
            if ((o.lanes & bit(lane)) != 0) o.digests[lane].emplace(kLaneKind[lane]);
          }
        }
        if (slot.last) {
          ++next_segment;
          next_offset = 0;
          next_piece = 0;
        } else {
          next_offset += slot.length;
          ++next_piece;
        }
        lock.unlock();
        if (slot.capacity < slot.length) {  // this slot is the reader's alone until Loaded
          constexpr std::uint64_t kSmall = std::uint64_t{64} << 10;
          slot.capacity = static_cast<std::size_t>(slot.length <= kSmall ? kSmall : kChunk);
          // Uninitialised on purpose (it is read into at once); not make_unique_for_overwrite,
          // which libc++ 14 (the ClusterFuzzLite build's) lacks.
          slot.buffer = std::unique_ptr<std::uint8_t[]>(new std::uint8_t[slot.capacity]);
        }
        std::string failure;
        Input::ReadFailure read_failure;
        if (!input.read_into(slot.at,
                             std::span(slot.buffer.get(), static_cast<std::size_t>(slot.length)),
                             read_failure)) {
          failure = fmt::format("cannot read {} at 0x{:x}: {}", shown_name(path), read_failure.at,
                                read_failure.why);
        }
        lock.lock();
        if (!failure.empty() && !error) error = failure;
        slot.state = Slot::State::Loaded;
        changed.notify_all();
        continue;
      }
      if (task == nullptr) {
        changed.wait(lock);
        continue;
      }
      Slot& slot = *task;
      const unsigned lane = task_lane;
      slot.running = static_cast<std::uint8_t>(slot.running | bit(lane));
      Digest& digest = lane < kModelLanes ? *model[lane]
                       : lane == kGapLane ? *gaps
                                          : *open.at(slot.segment).digests[lane];
      const Segment& segment = segments[slot.segment];
      lock.unlock();
      std::string failure;
      try {
        digest.update(slot.buffer.get(), static_cast<std::size_t>(slot.length));
        if (slot.last && lane >= kModelLanes && lane != kGapLane) {
          if (segment.kind == Segment::Kind::Header) {
            result.files[segment.index].header_sha256 = digest.sha256();
          } else {
            TensorHash& t = result.tensors[segment.index];
            switch (digest.kind()) {
              case DigestKind::Xxh64: t.xxh64 = digest.xxh64(); break;
              case DigestKind::Sha1: t.sha1 = digest.sha1(); break;
              case DigestKind::Sha256: t.sha256 = digest.sha256(); break;
            }
          }
        }
      } catch (const std::exception& e) {  // OpenSSL failed: tell every thread to stop
        failure = e.what();
      }
      lock.lock();
      if (!failure.empty()) {
        if (!error) error = failure;
        changed.notify_all();
        return;
      }
      slot.running = static_cast<std::uint8_t>(slot.running & ~bit(lane));
      slot.pending = static_cast<std::uint8_t>(slot.pending & ~bit(lane));
      if (lane < kModelLanes) {
        ++model_next[lane];
      } else if (lane == kGapLane) {
        ++gap_next;
      } else {
        Open& o = open.at(slot.segment);
        ++o.next[lane];
        if (slot.last) {
          o.lanes = static_cast<std::uint8_t>(o.lanes & ~bit(lane));
          if (o.lanes == 0) open.erase(slot.segment);
        }
      }
      if (slot.pending == 0) slot.state = Slot::State::Free;
      changed.notify_all();
    }
  };
  if (parallel) {
    pool->run(job);
  } else {
    job(0);
  }
  if (error || stopped) {
    // Cancelled or failed: the ring may hold pieces no lane read, and no digest is whole.
    stopped = true;
    for (Slot& slot : slots) slot.state = Slot::State::Free;
  } else if (gaps) {
    result.files[gap_file].gaps_sha256 = gaps->sha256();
  }
  return error;
}

HashEngine::HashEngine(const HashOptions& options, bool uuid)
    : impl_(std::make_unique<Impl>(options, uuid)) {}

HashEngine::~HashEngine() = default;

std::optional<std::string> HashEngine::run(const Input& input, const std::string& path,
                                           const std::vector<Segment>& segments,
                                           HashResult& result) {
  return impl_->run(input, path, segments, result);
}

bool HashEngine::cancelled() const {
  return impl_->stopped || impl_->cancel_requested();
}

void HashEngine::finish(HashResult& result) {
  auto& model = impl_->model;
  if (model[0]) result.xxh64 = model[0]->xxh64();
  if (model[1]) result.sha1 = model[1]->sha1();
  if (model[2]) result.sha256 = model[2]->sha256();
  if (model[kUuidLane]) result.uuid = uuid_v5(model[kUuidLane]->sha1());
}

}  // namespace ggufcheck::detail
