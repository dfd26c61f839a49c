// Split sets (validate_set, GGUF8001-GGUF8007) on sets built from the input: the test kit's small
// model written as 1 to 4 shards the way gguf-split writes them (model_shards: split.no,
// split.count, split.tensors.count, the tensors dealt out in order), as files in a private
// directory, then broken by a program of moves read from the input: a split key set to another
// value, given another type or removed, a tensor moved, duplicated (in another shard or the same
// one), dropped or renamed to a name that is the same up to a NUL, the model keys moved to a later
// shard, two shards swapped, a shard missing, empty, cut, with a byte flipped or replaced by the
// input's own bytes. The set is given as llama.cpp is given one: every shard's path by name
// (<prefix>-0000K-of-0000N.gguf), the first shard's or a later one's alone, a name whose count
// says more shards than there are, paths of other names in order or out of it, or one unsplit
// file. validate_set under a profile chosen by the input must:
// - return one report per shard that is there (one in all when none is), each its file's, each
//   with the invariants of every report (fuzz::check_report: findings sorted by offset and inside
//   that file, counts, exit status, facts);
// - say a shard is missing (GGUF8001) where llama.cpp would miss it;
// - pass a set no move touched (a set by name, or one unsplit file);
// - give a file alone the findings validate_file gives it, besides the set's own (its verdict
//   when it has none of those);
// - report the same on a second run (a replay; one input in four fuzzing).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "models.hpp"
#include "pipeline.hpp"

namespace {

using namespace ggufcheck;
using fuzz::Choices;
using testing::find_pair;

constexpr std::size_t kMaxInput = 4096;
constexpr std::size_t kMaxMoves = 12;

// The private directory of the shards, made once per process and removed at its exit.
const std::string& directory() {
  static const std::string dir = [] {
    char name[] = "/tmp/fuzz_sets.XXXXXX";
    const char* made = ::mkdtemp(name);
    if (made == nullptr) {
      std::perror("fuzz_sets: mkdtemp");
      std::abort();
    }
    std::string path = made;
    static std::string removed;
    removed = path;
    std::atexit([] { ::rmdir(removed.c_str()); });
    return path;
  }();
  return dir;
}

bool write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return at == bytes.size();
}

std::string shard_name(const std::string& prefix, std::size_t number, std::size_t count) {
  return prefix + fmt::format("-{:05}-of-{:05}.gguf", number, count);
}

// How the set is given to validate_set.
enum class Naming : std::uint8_t {
  ByName,       // every shard's path by name, in order
  FirstByName,  // the first shard's path alone (the set found from it)
  LaterByName,  // a later shard's path alone (the set found from it)
  MoreByName,   // the first shard's path alone, its name counting one shard more than written
  Listed,       // paths of other names, in order
  ListedOutOfOrder,
  Unsplit,  // one file without split keys
  kCount
};

// A byte change after writing: flip, cut, empty, replace by the input's bytes.
struct Patch {
  enum class Kind : std::uint8_t { Flip, Cut, Empty, Raw } kind;
  std::size_t shard;
  std::size_t at;
  std::uint8_t bit;
  std::vector<std::uint8_t> raw;
};

struct Set {
  Naming naming = Naming::ByName;
  Options options;
  std::vector<Document> docs;  // the shards' documents, in order
  std::vector<bool> present;
  std::vector<Patch> patches;
  bool touched = false;  // a move was made
};

Value other_typed(Choices& in, std::uint64_t value) {
  switch (in.below(6)) {
    case 0: return Value::u32(static_cast<std::uint32_t>(value));
    case 1: return Value::i32(static_cast<std::int32_t>(value));
    case 2: return Value::array(ValueType::Uint16, {Value::u16(static_cast<std::uint16_t>(value))});
    case 3: return Value::string(std::to_string(value));
    case 4: return Value::u8(static_cast<std::uint8_t>(value));
    default: return Value::u64(value);
  }
}

void move(Choices& in, Set& set) {
  std::vector<Document>& docs = set.docs;
  const std::size_t n = docs.size();
  const std::size_t k = in.below(n);
  const std::size_t j = in.below(n);
  static constexpr const char* kKeys[] = {"split.no", "split.count", "split.tensors.count"};
  Document& d = docs[k];
  switch (in.below(16)) {
    case 0:  // split.no, split.count, split.tensors.count: another value of their type
    case 1:
    case 2: {
      const char* key = kKeys[in.below(3)];
      KeyValue* kv = find_pair(d, key);
      const std::uint32_t v = in.below(4) == 0 ? in.u16() : static_cast<std::uint32_t>(in.below(6));
      const Value value = std::string_view(key) == "split.tensors.count"
                              ? Value::i32(static_cast<std::int32_t>(v) - 1)
                              : Value::u16(static_cast<std::uint16_t>(v));
      if (kv != nullptr) {
        kv->value = value;
      } else {
        d.metadata.push_back({key, value, {}});
      }
      break;
    }
    case 3: {  // a split key of another type
      KeyValue* kv = find_pair(d, kKeys[in.below(3)]);
      if (kv != nullptr) kv->value = other_typed(in, kv->value.bits);
      break;
    }
    case 4: {  // a split key removed
      const std::string key = kKeys[in.below(3)];
      std::erase_if(d.metadata, [&](const KeyValue& kv) { return kv.key == key; });
      break;
    }
    case 5:  // a tensor moved to another shard
      if (!d.tensors.empty()) {
        const std::size_t t = in.below(d.tensors.size());
        Tensor tensor = d.tensors[t];
        d.tensors.erase(d.tensors.begin() + static_cast<std::ptrdiff_t>(t));
        docs[j].tensors.insert(docs[j].tensors.begin() + static_cast<std::ptrdiff_t>(
                                                             in.below(docs[j].tensors.size() + 1)),
                               std::move(tensor));
      }
      break;
    case 6:  // a tensor duplicated, in another shard or the same one
      if (!d.tensors.empty()) docs[j].tensors.push_back(d.tensors[in.below(d.tensors.size())]);
      break;
    case 7:  // a tensor dropped
      if (!d.tensors.empty()) {
        d.tensors.erase(d.tensors.begin() +
                        static_cast<std::ptrdiff_t>(in.below(d.tensors.size())));
      }
      break;
    case 8:  // a tensor renamed: the same C string as another's, or another name
      if (!d.tensors.empty()) {
        std::string& name = d.tensors[in.below(d.tensors.size())].name;
        if (in.below(2) == 0) {
          const Document& other = docs[j];
          name = other.tensors.empty() ? name : other.tensors[in.below(other.tensors.size())].name;
          name += std::string(1, '\0') + "x";
        } else {
          name += ".renamed";
        }
      }
      break;
    case 9:  // the model keys (all but the split keys) moved to a later shard
      if (k != j) {
        std::vector<KeyValue> keep, moved;
        for (KeyValue& kv : docs[0].metadata) {
          (kv.key.rfind("split.", 0) == 0 ? keep : moved).push_back(std::move(kv));
        }
        docs[0].metadata = std::move(keep);
        const std::size_t to = std::max<std::size_t>(j, 1) % n;
        docs[to].metadata.insert(docs[to].metadata.begin(), moved.begin(), moved.end());
      }
      break;
    case 10:  // two shards swapped
      std::swap(docs[k], docs[j]);
      break;
    case 11:  // a shard missing
      set.present[k] = false;
      break;
    case 12:
      set.patches.push_back(
          {Patch::Kind::Flip, k, in.u16(), static_cast<std::uint8_t>(in.byte()), {}});
      break;
    case 13: set.patches.push_back({Patch::Kind::Cut, k, in.u16(), 0, {}}); break;
    case 14: set.patches.push_back({Patch::Kind::Empty, k, 0, 0, {}}); break;
    default: set.patches.push_back({Patch::Kind::Raw, k, 0, 0, in.rest()}); break;
  }
  set.touched = true;
}

Set build(Choices& in) {
  Set set;
  const std::uint8_t shape = in.byte();
  set.naming = static_cast<Naming>(shape % static_cast<unsigned>(Naming::kCount));
  std::size_t n = 1 + shape / 8 % 4;
  if (set.naming == Naming::Unsplit) n = 1;
  if (set.naming == Naming::LaterByName || set.naming == Naming::ListedOutOfOrder) {
    n = std::max<std::size_t>(n, 2);
  }
  const std::uint8_t how = in.byte();
  static const Profile kProfiles[] = {Profile::Strict, Profile::Spec, Profile::LlamaCpp};
  set.options.profile = kProfiles[how % 3];
  set.options.helper_thread = false;
  set.options.model_checks = how / 3 % 8 != 0;
  set.options.werror = how / 24 % 4 == 0;
  if (how / 96 == 2) set.options.limits.max_findings = 2;
  // The documents are the same for every input: made once.
  static const std::vector<std::vector<Document>> kSets = [] {
    std::vector<std::vector<Document>> sets;
    for (std::size_t count = 1; count <= 4; ++count) sets.push_back(testing::model_shards(count));
    return sets;
  }();
  static const Document kModel = testing::model_document();
  set.docs = set.naming == Naming::Unsplit ? std::vector<Document>{kModel} : kSets[n - 1];
  set.present.assign(n, true);
  for (std::size_t m = 0; m < kMaxMoves && !in.empty(); ++m) move(in, set);
  return set;
}

struct Files {
  std::vector<std::string> files;  // every shard's path, in order
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> given;  // what validate_set is given
  std::vector<std::string> names;  // the set's shards as validate_set reads them
};

Files write(Set& set, std::size_t run) {
  Files w;
  const std::size_t n = set.docs.size();
  const std::string dir = directory();
  const std::string prefix = dir + "/m" + std::to_string(run % 2);
  const bool by_name = set.naming == Naming::ByName || set.naming == Naming::FirstByName ||
                       set.naming == Naming::LaterByName || set.naming == Naming::MoreByName;
  const std::size_t count = set.naming == Naming::MoreByName ? n + 1 : n;
  for (std::size_t k = 0; k < n; ++k) {
    w.files.push_back(by_name ? shard_name(prefix, k + 1, count)
                      : set.naming == Naming::Unsplit
                          ? prefix + ".gguf"
                          : prefix + "-part" + std::to_string(k) + ".gguf");
  }
  std::vector<std::vector<std::uint8_t>> bytes;
  for (const Document& d : set.docs) bytes.push_back(write_bytes(d));
  for (const Patch& p : set.patches) {
    std::vector<std::uint8_t>& b = bytes[p.shard];
    switch (p.kind) {
      case Patch::Kind::Flip:
        if (!b.empty()) b[p.at % b.size()] ^= static_cast<std::uint8_t>(1U << (p.bit % 8));
        break;
      case Patch::Kind::Cut:
        if (!b.empty()) b.resize(p.at % b.size());
        break;
      case Patch::Kind::Empty: b.clear(); break;
      case Patch::Kind::Raw: b = p.raw; break;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    w.sizes.push_back(bytes[k].size());
    if (set.present[k] && !write_file(w.files[k], bytes[k])) set.present[k] = false;
  }
  switch (set.naming) {
    case Naming::ByName:
    case Naming::Listed:
    case Naming::Unsplit:
      w.given = w.files;
      w.names = w.files;
      break;
    case Naming::FirstByName:
      w.given = {w.files[0]};
      w.names = w.files;
      break;
    case Naming::LaterByName:
      w.given = {w.files[1]};
      w.names = w.files;
      break;
    case Naming::MoreByName:
      w.given = {w.files[0]};
      w.names = w.files;
      w.names.push_back(shard_name(prefix, count, count));
      w.sizes.push_back(0);
      set.present.push_back(false);
      break;
    default:  // out of order: the last first
      w.given = w.files;
      std::rotate(w.given.rbegin(), w.given.rbegin() + 1, w.given.rend());
      w.names = w.given;
      break;
  }
  // A set of one shard by name is a file alone: its name counts 1.
  return w;
}

void remove_files(const Files& w) {
  for (const std::string& f : w.files) ::unlink(f.c_str());
}

std::string render(const SetReports& r, const Options& options) {
  return render_json(std::span<const Report>(r.reports), options, 0) +
         (r.lone_shard ? " lone" : "");
}

std::string check_set(Set& set, const Files& w, bool again) {
  const Options& options = set.options;
  const SetReports out = validate_set(w.given, options);
  // The shards there, in the set's order, with their sizes (without the model checks, each path
  // given is validated as a file, there or not).
  struct There {
    std::string name;
    std::uint64_t size = 0;
    bool present = false;
  };
  std::vector<There> there;
  const std::vector<std::string>& names = options.model_checks ? w.names : w.given;
  for (const std::string& name : names) {
    const auto at = std::find(w.files.begin(), w.files.end(), name);
    const auto k = static_cast<std::size_t>(at - w.files.begin());
    const bool present = at != w.files.end() && set.present[k];
    if (present || !options.model_checks)
      there.push_back({name, present ? w.sizes[k] : 0, present});
  }
  if (there.empty()) {
    if (out.reports.size() != 1 || out.reports[0].passed()) {
      return "no shard there: not one failing report";
    }
    return {};
  }
  if (out.reports.size() != there.size()) {
    return "validate_set returned " + std::to_string(out.reports.size()) + " reports for " +
           std::to_string(there.size()) + " shards there";
  }
  if (out.lone_shard && w.given.size() != 1) return "a lone shard among several paths";
  bool dropped = false, missing_reported = false;
  for (std::size_t i = 0; i < out.reports.size(); ++i) {
    const Report& report = out.reports[i];
    if (report.path != there[i].name) {
      return "report " + std::to_string(i) + " is of " + report.path + ", not " + there[i].name;
    }
    if (!there[i].present) continue;
    if (const std::string problem = fuzz::check_report(report, options, there[i].size);
        !problem.empty()) {
      return "report " + std::to_string(i) + " (" + report.path + "): " + problem;
    }
    dropped = dropped || report.findings_dropped != 0;
    for (const Finding& f : report.findings) {
      missing_reported = missing_reported || f.code == Code::SplitShardMissing;
    }
  }
  // A missing shard of a set by name: llama.cpp misses it (reported in every profile when it is
  // the first; otherwise unless llama.cpp loads the first shard alone, which the llama.cpp
  // profile leaves unsaid).
  const bool by_name = w.given.size() == 1 ? w.names.size() > 1 : set.naming == Naming::ByName;
  if (options.model_checks && by_name && !dropped && there.size() < w.names.size() &&
      options.profile != Profile::LlamaCpp && !missing_reported) {
    return "a shard of the set is not there, and no report says so";
  }
  // A set nothing touched passes.
  if (!set.touched && options.model_checks &&
      (set.naming == Naming::ByName || set.naming == Naming::FirstByName ||
       set.naming == Naming::LaterByName || set.naming == Naming::Unsplit)) {
    for (const Report& report : out.reports) {
      if (!report.passed()) return "a sound set fails: " + render(out, options);
    }
  }
  // A file alone: validate_file's findings, besides the set's.
  if (w.given.size() == 1 && w.names.size() == 1 && !there.empty()) {
    const Report alone = validate_file(w.given[0], options);
    const Report& report = out.reports[0];
    std::vector<Finding> own;
    for (const Finding& f : report.findings) {
      if (catalogue_entry(f.code).area != Area::SplitSet) own.push_back(f);
    }
    if (report.findings_dropped == 0 && alone.findings_dropped == 0) {
      if (own.size() != alone.findings.size()) return "a file alone: other findings than its own";
      for (std::size_t i = 0; i < own.size(); ++i) {
        const Finding& a = own[i];
        const Finding& b = alone.findings[i];
        if (a.code != b.code || a.offset != b.offset || a.severity != b.severity ||
            a.message != b.message) {
          return "a file alone: finding " + std::to_string(i) + " differs from its own";
        }
      }
      if (own.size() == report.findings.size() && report.passed() != alone.passed()) {
        return "a file alone: another verdict than validate_file's";
      }
    }
  }
  if (again) {
    const SetReports second = validate_set(w.given, options);
    if (render(second, options) != render(out, options)) return "a second run reports otherwise";
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInput) return 0;
  static std::size_t runs = 0;
  Choices in(data, size);
  Set set = build(in);
  const Files w = write(set, runs++);
  const std::string problem = check_set(set, w, fuzz::every_run || (size > 0 && data[0] % 4 == 1));
  remove_files(w);
  fuzz::fail_if(problem, Bytes(data, size));
  return 0;
}
