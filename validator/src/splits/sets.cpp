// Split sets (GGUF8001-GGUF8007): a model written as shards, checked as llama.cpp's model loader
// (llama_model_loader's constructor, src/llama-model-loader.cpp) loads them.
//
// llama_model_load_from_file(first shard) reads split.count (u16, optional: absent or at most 1
// loads the file alone; another type refuses it), then split.no (u16, required, 0: a set is
// loaded from its first shard), derives the other names from the first one's
// (llama_split_prefix: the path must end in -00001-of-<count>.gguf), opens each and reads its
// split.no through gguf_get_val_u16 (absent refuses; another type aborts on GGML_ASSERT; it must
// be the shard's index), refuses a tensor name (a C string) seen in an earlier shard, and
// finally compares split.tensors.count (i32, required) with the number of tensors.
// llama_model_load_from_splits(paths, n) does the same with the paths given, which must be
// split.count many, whatever their names. Every model key is read from the first shard.
//
// What the loader checks is reported in every profile (Rule::Loader); what only the writers'
// convention asks for (gguf-split writes the three keys in every shard, with the same
// split.count and split.tensors.count; later shards' split.count and split.tensors.count are
// never read by llama.cpp) is reported by strict and spec (Rule::Convention).
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <set>
#include <utility>

#include "index/keys.hpp"
#include "llama_loader/loader.hpp"
#include "splits/names.hpp"
#include "splits/shards.hpp"
#include "util/duplicates.hpp"
#include "validate/validate.hpp"

namespace ggufcheck {
namespace detail {
namespace {

enum class Kind : std::uint8_t {
  Alone,   // a file alone: its own split keys, as llama_model_load_from_file reads them
  ByName,  // <prefix>-%05d-of-%05d.gguf, every shard of the count its name says, in order
  Listed,  // paths given in an order, as llama_model_load_from_splits reads them
};

// Loader: llama.cpp refuses (or aborts on) what the rule finds. Convention: only the writers'
// convention asks for it, and the llama.cpp profile does not report it.
enum class Rule : std::uint8_t { Loader, Convention };

constexpr std::size_t kPathShown = 1024;

std::string shown(std::string_view path) {
  return escape(path, kPathShown);
}

constexpr std::string_view kKeysHint =
    "every shard holds split.no (uint16, from 0), split.count (uint16) and split.tensors.count "
    "(int32), as gguf-split writes them";
constexpr std::string_view kNameHint =
    "name the shards <prefix>-00001-of-0000N.gguf to <prefix>-0000N-of-0000N.gguf, as gguf-split "
    "does";

// Findings the report had but did not keep (beyond Limits::max_findings), per severity.
std::array<std::uint64_t, 4> dropped_of(const Report& report) {
  std::array<std::uint64_t, 4> dropped{};
  const auto kept = [&](Severity s) {
    return static_cast<std::uint64_t>(
        std::count_if(report.findings.begin(), report.findings.end(),
                      [s](const Finding& f) { return f.severity == s; }));
  };
  dropped[static_cast<std::size_t>(Severity::Error)] = report.errors - kept(Severity::Error);
  dropped[static_cast<std::size_t>(Severity::Warning)] = report.warnings - kept(Severity::Warning);
  dropped[static_cast<std::size_t>(Severity::Note)] = report.notes - kept(Severity::Note);
  return dropped;
}

// The set's findings about a shard join its own, within the report's limit.
void merge_findings(Report& report, Sink& sink, const Options& options) {
  std::array<std::uint64_t, 4> dropped = dropped_of(report);
  std::vector<Finding> findings = std::move(report.findings);
  for (Finding& f : sink.take()) {
    if (findings.size() >= options.limits.max_findings) {
      ++dropped[static_cast<std::size_t>(f.severity)];
      continue;
    }
    findings.push_back(std::move(f));
  }
  for (std::size_t s = 0; s < dropped.size(); ++s) dropped[s] += sink.dropped()[s];
  finish_report(report, std::move(findings), dropped);
}

template <typename Predicate>
void remove_findings(Report& report, Predicate&& remove) {
  const std::array<std::uint64_t, 4> dropped = dropped_of(report);
  std::vector<Finding> findings = std::move(report.findings);
  std::erase_if(findings, remove);
  finish_report(report, std::move(findings), dropped);
}

std::optional<std::uint32_t> u16_of(const SplitKey& key) {
  if (!key.is(ValueType::Uint16)) return std::nullopt;
  return static_cast<std::uint16_t>(key.value);
}
std::optional<std::int32_t> i32_of(const SplitKey& key) {
  if (!key.is(ValueType::Int32)) return std::nullopt;
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(key.value));
}

class SetCheck {
 public:
  SetCheck(Kind kind, std::vector<SetShard>& shards, const Options& options,
           std::optional<ShardName> name)
      : kind_(kind), shards_(shards), options_(options), name_(std::move(name)) {
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      sinks_.push_back(std::make_unique<Sink>(options_));
    }
  }

  // The rules, with shard 0's index while its bytes are mapped (null when it was not read).
  void run(const FileIndex* first) {
    const SetShard& f = shards_[0];
    if (f.state == SetShard::State::Read && f.keys) first_shard(*f.keys);
    if (kind_ == Kind::Alone) return;
    missing_shards();
    for (std::size_t k = 1; k < shards_.size(); ++k) {
      if (shards_[k].state == SetShard::State::Read && shards_[k].keys) later_shard(k);
    }
    keep_only_the_first_shards_model_findings(first);
    tensors(first);
  }

  // The set's findings into the shards' reports.
  void merge() {
    for (std::size_t k = 0; k < shards_.size(); ++k) {
      if (shards_[k].state != SetShard::State::Missing) {
        merge_findings(shards_[k].report, *sinks_[k], options_);
      }
    }
  }

 private:
  template <typename... Args>
  void report(std::size_t shard, Rule rule, Code code, std::uint64_t offset, std::uint64_t length,
              const Field& field, std::string_view hint, fmt::format_string<Args...> format,
              Args&&... args) {
    if (rule == Rule::Convention && options_.profile == Profile::LlamaCpp) return;
    sinks_[shard]->report(code, offset, length, field, hint, format, std::forward<Args>(args)...);
  }

  void missing_key(std::size_t shard, Rule rule, std::string_view key, std::string_view why) {
    report(shard, rule, Code::SplitKeyMissing, 0, 0, Field("metadata"), kKeysHint, "no {}: {}", key,
           why);
  }
  void wrong_type(std::size_t shard, Rule rule, const SplitKey& key, std::string_view name,
                  std::string_view wanted, std::string_view why) {
    report(shard, rule, Code::SplitKeyWrongType, key.type_offset, 4, Field(key.field + " type"),
           kKeysHint, "{} is {}, not {}: {}", name, key.type_name(), wanted, why);
  }

  // The shards read (for a set by URL, no more than the first one's split.count says).
  [[nodiscard]] std::size_t size() const { return shards_.size(); }
  // The set's size as given: by name, the count the name says; else the files given.
  [[nodiscard]] std::size_t named() const {
    return kind_ == Kind::ByName ? std::size_t{name_->count} : size();
  }
  [[nodiscard]] const SplitKeys* keys(std::size_t k) const {
    return shards_[k].state == SetShard::State::Read && shards_[k].keys ? &*shards_[k].keys
                                                                        : nullptr;
  }
  // split.count of the first shard, as llama.cpp reads it (a u16), when it is one.
  [[nodiscard]] std::optional<std::uint32_t> count() const {
    const SplitKeys* k = keys(0);
    return k != nullptr ? u16_of(k->count) : std::nullopt;
  }
  // llama.cpp loads the first shard alone: its split.count is absent, or a u16 of at most 1.
  [[nodiscard]] bool first_loads_alone() const {
    const SplitKeys* k = keys(0);
    return k != nullptr && (!k->count.present || (count() && *count() <= 1));
  }
  // llama.cpp reads the later shards: the first's split.count is a u16 equal to the set's size
  // (by name, the name's count; given, the number of paths).
  [[nodiscard]] bool reads_later_shards() const {
    return count() && *count() == named() && size() == named();
  }
  // The rule of what a later shard's keys and tensors decide: the loader's, unless llama.cpp
  // never looks at the later shards because it loads the first one alone.
  [[nodiscard]] Rule later_rule() const {
    return first_loads_alone() ? Rule::Convention : Rule::Loader;
  }
  [[nodiscard]] std::string place(std::size_t k) const {
    if (kind_ == Kind::ByName) return fmt::format("shard {} of {} by its name", k + 1, named());
    return fmt::format("file {} of the {} given", k + 1, size());
  }

  void first_shard(const SplitKeys& k) {
    const SetShard& f = shards_[0];
    if (k.count.present && !k.count.is(ValueType::Uint16)) {
      wrong_type(0, Rule::Loader, k.count, "split.count", "uint16", "llama.cpp refuses the file");
      return;
    }
    const auto c = count();
    if (!c || *c <= 1) {
      if (kind_ == Kind::Alone) return;  // a file alone: not a set, nothing more is read
      const std::string why =
          fmt::format("llama.cpp loads this file alone, not the {} {}", named(),
                      kind_ == Kind::ByName ? "shards its name says" : "files given");
      if (!c) {
        missing_key(0, Rule::Convention, "split.count", why);
      } else {
        report(0, Rule::Convention, Code::SplitShardMisnumbered, k.count.value_offset,
               k.count.value_length, Field(k.count.field), kKeysHint, "split.count is {}: {}", *c,
               why);
      }
      return;
    }
    // A shard of *c: split.no must say it is the first.
    if (!k.no.present) {
      missing_key(0, Rule::Loader, "split.no", "llama.cpp refuses a shard without it");
    } else if (!k.no.is(ValueType::Uint16)) {
      wrong_type(0, Rule::Loader, k.no, "split.no", "uint16", "llama.cpp refuses the file");
    } else if (k.no.value != 0) {
      report(0, Rule::Loader, Code::SplitShardMisnumbered, k.no.value_offset, k.no.value_length,
             Field(k.no.field), "llama.cpp loads a set from its first shard, whose split.no is 0",
             "split.no is {}: this is shard {} of {}, and llama.cpp loads a set only from its "
             "first shard",
             k.no.value, k.no.value + 1, *c);
    }
    if (!k.tensors.present) {
      missing_key(0, Rule::Loader, "split.tensors.count",
                  "llama.cpp refuses a set whose first shard lacks it");
    } else if (!k.tensors.is(ValueType::Int32)) {
      wrong_type(0, Rule::Loader, k.tensors, "split.tensors.count", "int32",
                 "llama.cpp refuses the set");
    }
    const bool derivable = names_first_shard(f.path, *c);
    switch (kind_) {
      case Kind::Alone:
        // The name llama.cpp derives the others from (a shard name with a count of 2 or more
        // would have made this a set by name).
        report(0, Rule::Loader, Code::SplitFileName, 0, 0, Field("file name"), kNameHint,
               "the file {} is a shard of {} by its split.count, but its name is not "
               "<prefix>-00001-of-{:05}.gguf: llama.cpp finds the other shards by names derived "
               "from the first one's, and refuses it",
               shown(f.path), *c, *c);
        break;
      case Kind::ByName:
        if (*c != named()) {
          report(0, Rule::Loader, Code::SplitFileName, 0, 0, Field("file name"), kNameHint,
                 "split.count is {} but the name says {} shards: llama.cpp looks for "
                 "{}-00001-of-{:05}.gguf and refuses this name{}",
                 *c, named(), shown(name_->prefix), *c, not_fetched());
        }
        break;
      case Kind::Listed:
        if (*c > size()) {
          report(0, Rule::Loader, Code::SplitShardMissing, 0, 0, Field("split set"), "",
                 "split.count is {} but {} files were given: llama.cpp needs every shard", *c,
                 size());
        } else if (*c < size()) {
          report(0, Rule::Loader, Code::SplitShardMisnumbered, k.count.value_offset,
                 k.count.value_length, Field(k.count.field), kKeysHint,
                 "split.count is {} but {} files were given as its shards", *c, size());
        }
        if (!derivable) {
          report(0, Rule::Convention, Code::SplitFileName, 0, 0, Field("file name"), kNameHint,
                 "the file {} is not named <prefix>-00001-of-{:05}.gguf: llama.cpp loads this set "
                 "only when "
                 "given every shard's path (llama_model_load_from_splits), not from the first "
                 "shard's (llama-cli -m, llama-server)",
                 shown(f.path), *c);
        }
        break;
    }
  }

  // A set by URL read no further than its first shard's split.count: what was left out.
  [[nodiscard]] std::string not_fetched() const {
    if (size() >= named()) return {};
    if (size() + 1 == named()) return fmt::format("; shard {} was not fetched", named());
    return fmt::format("; shards {} to {} were not fetched", size() + 1, named());
  }

  // Shards of a set by name that are not there: one finding per run of them, in the first
  // shard's report that is there (the first shard's own absence first).
  void missing_shards() {
    if (kind_ != Kind::ByName) return;
    std::size_t at = 0;
    while (at < size() && shards_[at].state == SetShard::State::Missing) ++at;
    if (at == size()) return;  // none there: the caller reports the path it was given
    const Rule rule = later_rule();
    if (shards_[0].state == SetShard::State::Missing) {
      report(at, Rule::Loader, Code::SplitShardMissing, 0, 0, Field("split set"),
             "copy or download every shard of the set",
             "the first shard {} is not there ({}): "
             "llama.cpp loads a set from its first shard",
             shown(shards_[0].path), shards_[0].missing);
    }
    for (std::size_t k = 1; k < size();) {
      if (shards_[k].state != SetShard::State::Missing) {
        ++k;
        continue;
      }
      std::size_t last = k;
      while (last + 1 < size() && shards_[last + 1].state == SetShard::State::Missing) ++last;
      if (last == k) {
        report(at, rule, Code::SplitShardMissing, 0, 0, Field("split set"),
               "copy or download every shard of the set", "shard {} of {} is not there: {} ({})",
               k + 1, named(), shown(shards_[k].path), shards_[k].missing);
      } else {
        report(at, rule, Code::SplitShardMissing, 0, 0, Field("split set"),
               "copy or download every shard of the set",
               "shards {} to {} of {} are not there: {} to {} ({})", k + 1, last + 1, named(),
               shown(shards_[k].path), shown(shards_[last].path), shards_[k].missing);
      }
      k = last + 1;
    }
  }

  void later_shard(std::size_t k) {
    const SplitKeys& s = *keys(k);
    const Rule rule = later_rule();
    // split.no, as gguf_get_val_u16 reads it: any pair of type u16 holding one value.
    if (!s.no.present) {
      missing_key(k, rule, "split.no", "llama.cpp refuses a shard without it");
    } else if (!s.no.is(ValueType::Uint16) && !s.no.one_u16_array()) {
      wrong_type(k, rule, s.no, "split.no", "uint16",
                 "llama.cpp aborts reading it (GGML_ASSERT in gguf_get_val_u16)");
    } else {
      if (s.no.one_u16_array()) {
        wrong_type(k, Rule::Convention, s.no, "split.no", "uint16",
                   "llama.cpp reads the element, readers that check the type refuse it");
      }
      if (s.no.value != k) {
        report(k, rule, Code::SplitShardMisnumbered, s.no.value_offset, s.no.value_length,
               Field(s.no.field), "shard i (from 0) holds split.no = i",
               "split.no is {} but this is {}: llama.cpp expects {}", s.no.value, place(k), k);
      }
    }
    // split.count and split.tensors.count: llama.cpp reads the first shard's only.
    const SplitKeys* f = keys(0);
    if (!s.count.present) {
      missing_key(k, Rule::Convention, "split.count", "gguf-split writes it in every shard");
    } else if (!s.count.is(ValueType::Uint16)) {
      wrong_type(k, Rule::Convention, s.count, "split.count", "uint16",
                 "gguf-split writes a uint16");
    } else if (const auto first = count(); first && s.count.value != *first) {
      report(k, Rule::Convention, Code::SplitShardMisnumbered, s.count.value_offset,
             s.count.value_length, Field(s.count.field), kKeysHint,
             "split.count is {} but the first shard's is {}", s.count.value, *first);
    } else if (!first && s.count.value != named()) {
      report(k, Rule::Convention, Code::SplitShardMisnumbered, s.count.value_offset,
             s.count.value_length, Field(s.count.field), kKeysHint,
             "split.count is {} but the set has {} shards", s.count.value, named());
    }
    if (!s.tensors.present) {
      missing_key(k, Rule::Convention, "split.tensors.count",
                  "gguf-split writes it in every shard");
    } else if (!s.tensors.is(ValueType::Int32)) {
      wrong_type(k, Rule::Convention, s.tensors, "split.tensors.count", "int32",
                 "gguf-split writes an int32");
    } else if (const auto first = f != nullptr ? i32_of(f->tensors) : std::nullopt;
               first && i32_of(s.tensors) != *first) {
      report(k, Rule::Convention, Code::SplitTensorCountMismatch, s.tensors.value_offset,
             s.tensors.value_length, Field(s.tensors.field), kKeysHint,
             "split.tensors.count is {} but the first shard's is {}", *i32_of(s.tensors), *first);
    }
    // Shards after the first named as llama.cpp would derive them from the first's name (a set
    // given as a list; a set by name has those names).
    if (kind_ == Kind::Listed && count() && names_first_shard(shards_[0].path, *count()) &&
        k < *count()) {
      const std::string expected = shard_path(parse_shard_name(shards_[0].path)->prefix,
                                              static_cast<std::uint32_t>(k + 1), *count());
      if (shards_[k].path != expected) {
        report(k, Rule::Convention, Code::SplitFileName, 0, 0, Field("file name"), kNameHint,
               "the file {} is not named {}, the name llama.cpp derives from the first shard's",
               shown(shards_[k].path), shown(expected));
      }
    }
  }

  // What single-file checks say of a later shard's model keys does not apply: llama.cpp reads
  // every model key from the first shard (gguf-split writes only the split keys in the others).
  // A later shard keeps GGUF5007 only when the set has no general.quantization_version at all
  // and the first shard did not say so already; and GGUF7015, about ggml reading the file.
  void keep_only_the_first_shards_model_findings(const FileIndex* first) {
    const SplitKeys* f = keys(0);
    bool quantization_said =
        first == nullptr || f == nullptr || f->quantization_version ||
        std::any_of(shards_[0].report.findings.begin(), shards_[0].report.findings.end(),
                    [](const Finding& x) { return x.code == Code::MissingQuantizationVersion; });
    for (std::size_t k = 1; k < size(); ++k) {
      if (shards_[k].state != SetShard::State::Read) continue;
      bool kept_quantization = false;
      remove_findings(shards_[k].report, [&](const Finding& x) {
        if (x.code == Code::MissingQuantizationVersion) {
          if (quantization_said || kept_quantization) return true;
          kept_quantization = true;
          return false;
        }
        return x.code == Code::MissingArchitecture ||
               (catalogue_entry(x.code).area == Area::Model && x.code != Code::SlowReferenceLoad);
      });
      quantization_said = quantization_said || kept_quantization;
    }
  }

  [[nodiscard]] const FileIndex& model_of(std::size_t k, const FileIndex& first) const {
    return k == 0 ? first : shards_[k].skeleton.index();
  }

  // Across the shards: a tensor name twice, the total against split.tensors.count, and the
  // tensor set against the architecture's (check_tensor_set).
  void tensors(const FileIndex* first) {
    if (first == nullptr) return;
    std::uint64_t total = 0;
    for (const SetShard& s : shards_) {
      if (s.state != SetShard::State::Read || !s.tensors_read) return;
      total += s.tensor_count;
    }
    const Rule rule = later_rule();
    // Global entry e is tensor e - start[k] of shard k.
    std::vector<std::uint64_t> start(size() + 1, 0);
    for (std::size_t k = 0; k < size(); ++k) start[k + 1] = start[k] + shards_[k].tensor_count;
    const auto shard_of = [&](std::uint64_t e) {
      return static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), e) -
                                      start.begin() - 1);
    };
    const auto name_of = [&](std::size_t e) {
      const std::size_t k = shard_of(e);
      return c_string_prefix(model_of(k, *first).name(static_cast<std::size_t>(e - start[k])));
    };
    DuplicateFinder finder(static_cast<std::size_t>(total));
    std::uint64_t distinct = 0;
    // The tensors as llama.cpp's loader holds them (weights_map): the first of each name.
    std::vector<TensorRef> refs;
    refs.reserve(static_cast<std::size_t>(total));
    for (std::size_t k = 0; k < size(); ++k) {
      const FileIndex& m = model_of(k, *first);
      for (std::size_t i = 0; i < m.tensors.size(); ++i) {
        const std::size_t e = static_cast<std::size_t>(start[k] + i);
        const std::string_view name = c_string_prefix(m.name(i));
        const auto earlier = finder.insert(name, e, name_of);
        if (!earlier) {
          ++distinct;
          refs.push_back({&m, k, i});
          continue;
        }
        const std::size_t other = shard_of(*earlier);
        if (other == k) continue;  // twice in one file: that file's own finding
        report(k, rule, Code::SplitDuplicateTensor, m.tensors[i].name_offset,
               m.info_end(i) - m.tensors[i].name_offset, tensor_path(i, m.name(i)),
               "each tensor is written to exactly one shard",
               "tensor \"{}\" is also in {} as tensor[{}]: llama.cpp refuses the set", escape(name),
               shown(shards_[other].path), *earlier - start[other]);
      }
    }
    // The total, once llama.cpp has read every shard (with fewer or more files than split.count it
    // refuses the set before).
    const SplitKeys* f = keys(0);
    if (f != nullptr && reads_later_shards()) {
      if (const auto declared = i32_of(f->tensors);
          declared && (*declared < 0 || static_cast<std::uint64_t>(*declared) != distinct)) {
        report(0, rule, Code::SplitTensorCountMismatch, f->tensors.value_offset,
               f->tensors.value_length, Field(f->tensors.field),
               "split.tensors.count is the number of tensors of all shards together",
               "split.tensors.count is {} but the {} shards hold {} tensors: llama.cpp refuses "
               "the set",
               *declared, size(), distinct);
      }
    }
    // The tensor set, as the model's: when llama.cpp reads every shard, and every container is
    // sound (a model read from a broken container is a guess; its file fails already).
    if (!options_.model_checks || !reads_later_shards()) return;
    for (const SetShard& s : shards_) {
      const bool container_error =
          std::any_of(s.report.findings.begin(), s.report.findings.end(), [](const Finding& x) {
            const Area area = catalogue_entry(x.code).area;
            return x.severity == Severity::Error && area != Area::Model && area != Area::SplitSet;
          });
      if (container_error || s.report.findings_dropped != 0) return;
    }
    std::vector<Sink*> sinks;
    for (const auto& s : sinks_) sinks.push_back(s.get());
    check_tensor_set(*first, refs, sinks);
  }

  Kind kind_;
  std::vector<SetShard>& shards_;
  const Options& options_;
  std::optional<ShardName> name_;
  std::vector<std::unique_ptr<Sink>> sinks_;
};

// Whether something is at the path (a file the loader could open, or at least try to).
bool exists(const std::string& path) {
  if (is_url(path)) return true;  // known only by asking: the set's report says what is missing
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

}  // namespace
}  // namespace detail

std::vector<std::vector<std::string>> group_inputs(const std::vector<std::string>& paths) {
  std::vector<std::vector<std::string>> groups;
  std::set<std::pair<std::string, std::uint32_t>> sets;  // prefix and count of each set listed
  for (const std::string& path : paths) {
    const auto name = detail::parse_shard_name(path);
    if (!name || name->count < 2) {
      groups.push_back({path});
      continue;
    }
    if (sets.count({name->prefix, name->count}) != 0) continue;  // its set is listed already
    std::vector<std::string> shards;
    shards.reserve(name->count);
    for (std::uint32_t n = 1; n <= name->count; ++n) {
      shards.push_back(detail::shard_path(name->prefix, n, name->count));
    }
    if (!detail::exists(path) && std::none_of(shards.begin(), shards.end(), detail::exists)) {
      groups.push_back({path});  // nothing of the set is there: the path's own report says so
      continue;
    }
    sets.emplace(name->prefix, name->count);
    groups.push_back(std::move(shards));
  }
  return groups;
}

SetReports validate_set(const std::vector<std::string>& paths, const Options& options,
                        const ShardProgress& progress) {
  using detail::Kind;
  using detail::SetShard;
  using detail::SplitKeys;
  SetReports out;
  if (paths.empty()) return out;
  if (!options.model_checks) {  // files alone, as validate_file reads them
    for (const std::string& path : paths) {
      Options file_options = options;
      if (progress) {
        file_options.data.progress = [&](const DataProgress& p) { progress(path, p); };
      }
      out.reports.push_back(validate_file(path, file_options));
    }
    return out;
  }
  std::vector<std::string> names = paths;
  std::optional<detail::ShardName> name = detail::parse_shard_name(paths[0]);
  Kind kind = Kind::Listed;
  if (paths.size() == 1) {
    kind = name && name->count >= 2 ? Kind::ByName : Kind::Alone;
    if (kind == Kind::ByName) {
      names.clear();
      for (std::uint32_t n = 1; n <= name->count; ++n) {
        names.push_back(detail::shard_path(name->prefix, n, name->count));
      }
    }
  } else if (name && name->number == 1 && name->count == paths.size()) {
    bool by_name = true;
    for (std::size_t k = 0; k < paths.size() && by_name; ++k) {
      by_name = paths[k] ==
                detail::shard_path(name->prefix, static_cast<std::uint32_t>(k + 1), name->count);
    }
    if (by_name) kind = Kind::ByName;
  }
  if (kind != Kind::ByName) name.reset();

  // A set with a shard by URL is read within one deadline, its shards' (RemoteOptions).
  const bool remote = std::any_of(names.begin(), names.end(), is_url);
  Options set_options = options;
  if (remote && !set_options.remote.deadline) {
    set_options.remote.deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(options.remote.deadline_seconds);
  }
  // What single-file checks say of a later shard's model keys does not apply
  // (keep_only_the_first_shards_model_findings removes it): not reported at all in a later shard,
  // so that none is dropped beyond Limits::max_findings, still counted, once the kept ones are
  // removed (a sound shard failed on model findings it no longer showed).
  Options later_options = set_options;
  for (const CatalogueEntry& e : catalogue()) {
    if (e.code == Code::MissingArchitecture ||
        (e.area == Area::Model && e.code != Code::SlowReferenceLoad &&
         e.code != Code::MissingQuantizationVersion)) {
      later_options.severity_overrides[e.code] = Severity::Silent;
    }
  }
  std::vector<SetShard> shards(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) shards[k].path = names[k];
  detail::SetCheck check(kind, shards, options, name);
  std::atomic<bool> stopped{false};  // a shard's data scan was interrupted
  const auto interrupted = [&] { return stopped.load(); };
  // The first shard's bytes stay mapped while the others are read: the model checks of the set
  // read its metadata, and the others keep only their tensor infos.
  detail::visit_shard(shards[0], kind == Kind::Alone, set_options, progress,
                      [&](detail::FileIndex* first) {
                        stopped = shards[0].report.interrupted;
                        // A set by URL: no more shards than the first one's split.count says (the
                        // rest of the name's count is not fetched, and the set's findings say so).
                        if (kind == Kind::ByName && remote)
                          shards.resize(detail::shards_to_fetch(shards[0], shards.size()));
                        detail::visit_later_shards(shards, later_options, progress, stopped);
                        if (!interrupted()) check.run(first);
                      });
  if (shards[0].report.interrupted) stopped = true;
  if (!interrupted()) check.merge();
  if (std::all_of(shards.begin(), shards.end(),
                  [](const SetShard& s) { return s.state == SetShard::State::Missing; })) {
    out.reports.push_back(
        validate_file(paths[0], set_options));  // "cannot open ...", as for a file
    return out;
  }
  // A file alone whose split keys make it a shard of some set: anything but none of them, or a
  // whole model that says so (split.count a u16 of at most 1, split.no absent or a u16 0). A
  // later shard's split.count is never read by llama.cpp, so its type does not decide.
  if (const SplitKeys* k = shards[0].keys ? &*shards[0].keys : nullptr;
      kind == Kind::Alone && k != nullptr) {
    const bool any = k->no.present || k->count.present || k->tensors.present;
    const bool whole = (!k->count.present || (k->count.is(ValueType::Uint16) &&
                                              static_cast<std::uint16_t>(k->count.value) <= 1)) &&
                       (!k->no.present || (k->no.is(ValueType::Uint16) && k->no.value == 0));
    out.lone_shard = any && !whole;
  }
  for (std::size_t k = 0; k < shards.size(); ++k) {
    SetShard& s = shards[k];
    if (s.state == SetShard::State::Missing) continue;
    if (s.not_fetched) {
      // A run of shards the deadline left unfetched: one report, the first one's.
      std::size_t last = k;
      while (last + 1 < shards.size() && shards[last + 1].not_fetched) ++last;
      if (last > k) detail::name_unfetched_run(s.report, shards, k, last, options.remote);
      out.reports.push_back(std::move(s.report));
      k = last;
      continue;
    }
    out.reports.push_back(std::move(s.report));
  }
  return out;
}

}  // namespace ggufcheck
