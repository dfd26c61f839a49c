#include "splits/shards.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "index/keys.hpp"
#include "validate/remote.hpp"
#include "validate/validate.hpp"

namespace ggufcheck::detail {
namespace {

SplitKey read_key(const FileIndex& file_index, std::optional<std::size_t> index) {
  SplitKey key;
  if (!index) return key;
  const std::size_t i = *index;
  key.present = true;
  key.type = file_index.metadata[i].type();
  if (key.type == ValueType::Array) {
    const ArrayRecord& array = file_index.array(i);
    key.element = array.elements();
    key.count = array.count;
    if (key.one_u16_array()) {
      key.value = file_index.input.number_at(file_index.elements_offset(i), 2, file_index.endian)
                      .value_or(0);
    }
  } else {
    key.value = file_index.metadata[i].payload();
  }
  key.type_offset = file_index.type_offset(i);
  const ByteRange value = file_index.value_range(i);
  key.value_offset = value.offset;
  key.value_length = value.length;
  key.field = kv_path(i, file_index.key(i)).text();
  return key;
}

SplitKeys read_split_keys(const FileIndex& index, Profile profile) {
  const auto [no, count, tensors, quantization_version] = find_keys<4>(
      index, {"split.no", "split.count", "split.tensors.count", "general.quantization_version"},
      profile);
  return {read_key(index, no), read_key(index, count), read_key(index, tensors),
          quantization_version.has_value()};
}

void mark_unreadable(SetShard& shard, std::string why) {
  shard.state = SetShard::State::Unreadable;
  shard.report = unreadable_report(shown_path(shard.path), std::move(why));
  shard.keys.reset();
  shard.tensors_read = false;
  shard.tensor_count = 0;
  shard.skeleton = {};
}

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "of an unknown type";
}

}  // namespace

std::string SplitKey::type_name() const {
  if (type == ValueType::Array) return fmt::format("{}[{}]", to_string(element), count);
  return std::string(to_string(type));
}

// Anonymous memory, reserved but not committed: only the pages written become resident.
struct TensorSkeleton::Mapping {
  void* data = nullptr;
  std::size_t size = 0;
  explicit Mapping(std::size_t n) : size(n) {
    data = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                  -1, 0);
    if (data == MAP_FAILED) throw std::bad_alloc();
  }
  ~Mapping() { ::munmap(data, size); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
};

TensorSkeleton TensorSkeleton::of(const FileIndex& index) {
  TensorSkeleton skeleton;
  FileIndex& kept = skeleton.index_;
  kept.version = index.version;
  kept.endian = index.endian;
  kept.dialect = index.dialect;
  kept.tensor_count = index.tensor_count;
  kept.header_complete = index.header_complete;
  kept.tensors_complete = index.tensors_complete;
  kept.metadata_end = index.metadata_end;
  kept.infos_end = index.infos_end;
  if (index.tensors.empty()) return skeleton;
  // The tensor infos are the bytes [first name, infos_end): copied to the same offsets.
  const std::uint64_t begin = index.tensors[0].name_offset;
  if (begin > index.infos_end) return skeleton;  // not reached: the reader recorded them so
  auto bytes = std::make_shared<Mapping>(static_cast<std::size_t>(index.infos_end));
  auto* base = static_cast<std::uint8_t*>(bytes->data);
  Input::ReadFailure failure;
  if (!index.input.read_into(
          begin, std::span(base + begin, static_cast<std::size_t>(index.infos_end - begin)),
          failure)) {
    return skeleton;  // the shard changed while it was read: its own report says so
  }
  skeleton.bytes_ = std::move(bytes);
  kept.input = Input(Bytes(base, static_cast<std::size_t>(index.infos_end)));
  for (std::size_t i = 0; i < index.tensors.size(); ++i) kept.tensors.push_back(index.tensors[i]);
  return skeleton;
}

void visit_shard(SetShard& shard, bool alone, const Options& options, const ShardProgress& progress,
                 const std::function<void(FileIndex*)>& use) {
  const std::string shown = shown_path(shard.path);
  Options file_options = options;
  if (progress) {
    file_options.data.progress = [&progress, &shard](const DataProgress& p) {
      progress(shard.path, p);
    };
  }
  // A shard read (its bytes still held): its report, what the set checks need, then `use`
  // (once: `used` is set first, so a failure inside it does not call it again).
  const auto read = [&](Validated& validated, bool& used) {
    shard.report = std::move(validated.report);
    shard.state = SetShard::State::Read;
    FileIndex& index = validated.index;
    if (options.model_checks && index.metadata_complete) {
      shard.keys = read_split_keys(index, options.profile);
    }
    shard.tensors_read = index.metadata_complete && index.tensors_complete;
    shard.tensor_count = index.tensors.size();
    used = true;
    use(&index);
  };
  if (is_url(shard.path)) {
    // A remote shard: its bytes are held while `use` runs, as a mapping's are. One the server
    // says is not there (404, 410) is a missing shard of its set.
    Validated validated;
    bool used = false;
    const RemoteOutcome outcome =
        visit_remote(shard.path, file_options, shown, validated, [&] { read(validated, used); });
    if (outcome.state == RemoteOutcome::State::Missing && !alone) {
      shard.state = SetShard::State::Missing;
      shard.missing = outcome.status;
    } else if (outcome.state != RemoteOutcome::State::Read) {
      mark_unreadable(shard, outcome.why);
      shard.report = remote_failure_report(shown, outcome);
    }
    if (!used) use(nullptr);
    return;
  }
  struct stat st {};
  const bool stated = shard.path != "-" && ::stat(shard.path.c_str(), &st) == 0;
  if (!alone) {
    // A shard of a set: one that is not there is the set's finding (GGUF8001); one that is no
    // regular file is not opened (a FIFO could block forever).
    if (!stated) {
      const int error = errno;
      if (error == ENOENT || error == ENOTDIR) {
        shard.state = SetShard::State::Missing;
        shard.missing = std::strerror(error);
      } else {
        mark_unreadable(shard, fmt::format("cannot stat {}: {}", shard.path, std::strerror(error)));
      }
      use(nullptr);
      return;
    }
    if (!S_ISREG(st.st_mode)) {
      mark_unreadable(shard, fmt::format("cannot read {}: not a regular file ({})", shard.path,
                                         file_type_name(st.st_mode)));
      use(nullptr);
      return;
    }
  }
  if (!stated || !S_ISREG(st.st_mode) || st.st_size == 0) {
    // Standard input, streams, empty and missing files: validate_file's report, no split keys.
    shard.report = validate_file(shard.path, file_options);
    shard.state = shard.report.unreadable() ? SetShard::State::Unreadable : SetShard::State::Read;
    use(nullptr);
    return;
  }
  bool used = false;
  try {
    Validated validated;
    const auto error = with_input(shard.path, [&](const Input& input) {
      validate_input(input, nullptr, file_options, shown, validated);
      read(validated, used);
    });
    if (!error.ok()) mark_unreadable(shard, error.why());
  } catch (const std::bad_alloc&) {
    mark_unreadable(shard, fmt::format("not enough memory to validate {}: the other inputs are "
                                       "still checked",
                                       shard.path));
  } catch (const std::system_error& e) {  // no thread could be started for the data scan
    mark_unreadable(shard, fmt::format("cannot check the data of {}: {}", shard.path, e.what()));
  } catch (const std::runtime_error& e) {  // a read of the tensor data failed
    mark_unreadable(shard, fmt::format("cannot read {}: {}", shard.path, e.what()));
  }
  if (!used) use(nullptr);
}

namespace {

constexpr std::string_view kDeadlineHint =
    "raise --deadline if the server is slow but sound, or check the server";

}  // namespace

void visit_later_shards(std::vector<SetShard>& shards, const Options& options,
                        const ShardProgress& progress, std::atomic<bool>& stopped) {
  const auto& deadline = options.remote.deadline;
  const auto visit = [&](std::size_t k, const ShardProgress& shard_progress) {
    SetShard& shard = shards[k];
    if (is_url(shard.path) && deadline && std::chrono::steady_clock::now() >= *deadline) {
      mark_unreadable(shard, fmt::format("cannot read {}: the deadline of {} s (--deadline) "
                                         "passed before it was fetched",
                                         shown_path(shard.path), options.remote.deadline_seconds));
      shard.report.findings.front().hint = kDeadlineHint;
      shard.not_fetched = true;
      return;
    }
    try {
      visit_shard(shard, false, options, shard_progress, [&](FileIndex* index) {
        if (index != nullptr && shard.tensors_read) shard.skeleton = TensorSkeleton::of(*index);
      });
    } catch (const std::bad_alloc&) {  // the skeleton of a local shard
      mark_unreadable(shard, fmt::format("not enough memory to validate {}: the other inputs are "
                                         "still checked",
                                         shard.path));
    }
    if (shard.report.interrupted) stopped = true;
  };
  const bool concurrent =
      shards.size() > 2 && std::all_of(shards.begin() + 1, shards.end(),
                                       [](const SetShard& s) { return is_url(s.path); });
  if (!concurrent) {
    for (std::size_t k = 1; k < shards.size() && !stopped; ++k) visit(k, progress);
    return;
  }
  // Fetched kShardFetches at a time: a slow server costs its wait once per kShardFetches shards.
  std::mutex progress_mutex;  // the caller's progress is called from one thread at a time
  ShardProgress serial;
  if (progress) {
    serial = [&](const std::string& path, const DataProgress& p) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      progress(path, p);
    };
  }
  std::atomic<std::size_t> next{1};
  const auto worker = [&] {
    for (std::size_t k = next++; k < shards.size() && !stopped; k = next++) visit(k, serial);
  };
  std::vector<std::thread> threads;
  const std::size_t fetches = std::min(kShardFetches, shards.size() - 1);
  for (std::size_t i = 1; i < fetches; ++i) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {  // no thread to be had: fewer at a time
      break;
    }
  }
  worker();
  for (std::thread& t : threads) t.join();
}

std::size_t shards_to_fetch(const SetShard& first, std::size_t named) {
  if (first.state != SetShard::State::Read || !first.keys ||
      !first.keys->count.is(ValueType::Uint16)) {
    return named;
  }
  const auto declared = static_cast<std::uint16_t>(first.keys->count.value);
  return std::clamp<std::size_t>(declared, 1, named);
}

void name_unfetched_run(Report& report, const std::vector<SetShard>& shards, std::size_t first,
                        std::size_t last, const RemoteOptions& options) {
  for (Finding& f : report.findings) {
    if (f.code != Code::UnreadableFile) continue;
    f.message = fmt::format(
        "shards {} to {} were not fetched ({} to {}): the deadline of {} s (--deadline) passed "
        "first",
        first + 1, last + 1, shown_path(shards[first].path), shown_path(shards[last].path),
        options.deadline_seconds);
    f.hint = kDeadlineHint;
    return;
  }
}

}  // namespace ggufcheck::detail
