// `ggufcheck info`: what a person wants to see of a model first (architecture, size, the
// hyperparameters llama.cpp reads, vocabulary, chat templates, tensors by type, split set, every
// metadata pair with long values elided) and the verdict line. Works on rejected files as far as
// they can be read: every field is what the reader recorded, and a field it did not reach is
// absent. docs/info.md shows the text and the JSON (docs/info.schema.json).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/validate.hpp"

namespace ggufcheck {

struct InfoOptions {
  // Print arrays and strings whole, and every tensor; otherwise arrays show their first
  // kInfoArrayHead elements and strings their first kInfoStringHead bytes.
  bool full = false;
};
inline constexpr std::size_t kInfoArrayHead = 8;
inline constexpr std::size_t kInfoStringHead = 120;

// A value as info shows it: text for people, JSON for machines (both elided unless full).
struct InfoValue {
  std::string type;         // "u32", "string", "array[string]", "array[array]", ...
  std::string text;         // escaped, elided: 4096, "llama", [1, 2, 3, ... 32000 more]
  std::string json;         // the value as JSON text (elided arrays: their head)
  std::uint64_t count = 0;  // arrays: the element count; strings: the byte length
  bool elided = false;
};

struct InfoPair {
  std::string key;  // the raw bytes (shown escaped)
  InfoValue value;
};

struct InfoHyperparameter {
  std::string label;  // "context length"
  std::string name;   // the key after "<arch>.": "context_length"
  InfoValue value;
  std::size_t index = 0;  // the pair's index in the file
};

struct InfoTypeRow {
  std::string type;  // ggml type name ("Q4_K"), or "type 99" for an unknown id
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

struct InfoTensor {
  std::string name;  // the raw bytes (shown escaped)
  std::string type;
  std::vector<std::uint64_t> shape;
  std::optional<std::uint64_t> offset;  // file offset of the data, when the layout places it
  std::optional<std::uint64_t> bytes;
};

struct InfoSpecialToken {
  std::string role;  // "bos", "eos", "eot", "unk", "sep", "pad", "mask", "cls", "fim_pre", ...
  std::uint64_t id = 0;
  std::optional<std::string> text;  // the token's raw bytes, when the id is in the vocabulary
};

struct InfoTemplate {
  std::string key;  // tokenizer.chat_template or tokenizer.chat_template.<name>
  std::uint64_t bytes = 0;
  std::string known;  // identical to this template of the pinned llama.cpp, or empty
  std::string near;   // else a near match (a small edit of it; GGUF9016), or empty
};

struct Info {
  std::string path;
  Report report;  // the verdict: what `ggufcheck check` reports for the same path

  // the container
  std::uint64_t file_size = 0;
  std::optional<std::uint32_t> version;
  Endian endian = Endian::Little;
  std::uint32_t alignment = kDefaultAlignment;
  std::optional<std::uint64_t> kv_count;      // as the header says
  std::optional<std::uint64_t> tensor_count;  // as the header says
  std::optional<std::uint64_t> data_offset;

  // What kind of file it is, as ggufcheck judges it (docs/model-checks.md): "model",
  // "vocabulary" (no tensors), "adapter", "mmproj" or "imatrix"; empty when the header was not
  // read.
  std::string kind;

  // the model (absent when the key is absent or of another type; raw bytes, shown escaped)
  std::optional<std::string> architecture, name, size_label, basename, finetune, license;
  std::optional<std::uint64_t> file_type;
  std::string file_type_name;  // llama.cpp's name of file_type ("Q4_K - Medium"), or empty
  std::optional<std::uint64_t> parameters;  // the elements of every tensor read
  // <arch>.context_length, embedding_length, block_count, feed_forward_length,
  // attention.head_count, attention.head_count_kv, expert_count, expert_used_count,
  // rope.freq_base, ...: in that order, those the file has.
  std::vector<InfoHyperparameter> hyperparameters;

  // the vocabulary
  std::optional<std::string> tokenizer_model, tokenizer_pre;
  std::optional<std::uint64_t> tokens, merges;
  std::vector<InfoSpecialToken> special_tokens;
  std::vector<InfoTemplate> chat_templates;

  // the tensors
  std::uint64_t tensors_read = 0;
  std::optional<std::uint64_t> tensor_bytes;  // the sum of their sizes, when every one has one
  std::vector<InfoTypeRow> tensor_types;      // by ggml type id
  std::vector<InfoTensor> tensors;            // InfoOptions::full only

  // the split set (split.no, split.count, split.tensors.count) and its shards' names
  std::optional<std::uint64_t> split_no, split_count, split_tensors;
  std::vector<std::string> shards;

  std::vector<InfoPair> metadata;  // every pair read, in file order
};

// Reads the file ("-": standard input, read whole up to 4 GiB) and what `ggufcheck check` says of
// it under the options (a shard of a set named as llama.cpp names them: the set's verdict).
// An input that cannot be read gives an Info with only its path and a GGUF0001 report.
[[nodiscard]] Info info_file(const std::string& path, const Options& options,
                             const InfoOptions& info_options = {});

// The same for bytes in memory, validated alone (no split set: there is no name).
[[nodiscard]] Info info_bytes(Bytes bytes, const Options& options,
                              const InfoOptions& info_options = {}, std::string path = "<buffer>");

// The text people read (TextStyle::color for the verdict line) and the JSON document machines
// read: {"ggufcheck_info": 1, "files": [...]} (docs/info.schema.json).
[[nodiscard]] std::string render_info_text(const Info& info, bool color);
[[nodiscard]] std::string render_info_json(const std::vector<Info>& infos);

// Receives output in order, piece by piece; returns false when it could not be written.
using InfoOutput = std::function<bool(std::string_view)>;

// The same texts (the JSON document of several files, or their texts one after another) written
// as they are made: each file is read and written while it is mapped, its pairs, tensors and
// values rendered from the file itself (never an Info of them all), through a 64 KiB buffer. So
// memory is what validation needs, whatever the number of pairs or the size of a value shown
// whole (--full). What `ggufcheck info` runs.
class InfoWriter {
 public:
  InfoWriter(bool json, bool color, InfoOutput output);
  ~InfoWriter();
  InfoWriter(const InfoWriter&) = delete;
  InfoWriter& operator=(const InfoWriter&) = delete;

  // Reads the file (as info_file) and writes what info shows of it; returns its exit status.
  int file(const std::string& path, const Options& options, const InfoOptions& info_options = {});
  // Writes an Info made elsewhere (an input that could not be read).
  void write(const Info& info);
  // Ends the document (JSON) and hands over what is buffered; false if a write failed.
  bool finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ggufcheck
