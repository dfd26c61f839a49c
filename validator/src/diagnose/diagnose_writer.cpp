// Writer diagnosis (GGUF1901..GGUF1904): a file that fails structurally is read again under each
// wrong-writer hypothesis, the mistakes of the course chapter (gguf-format.md section 7). When
// one makes the whole file parse cleanly, the writer made that mistake: the note says so, right
// after the first error, with the fix. Mistakes come together (a writer that followed the chapter
// makes several), so combinations are tried too, the smallest first; only the smallest
// combination that explains the file is reported.
#include <algorithm>
#include <bit>
#include <optional>

#include "diagnose/diagnose.hpp"

namespace ggufcheck::detail {
namespace {

struct Hypothesis {
  Code code;
  bool Dialect::*flag;
};

constexpr Hypothesis kHypotheses[] = {
    {Code::WriterNulTerminatedStrings, &Dialect::nul_terminated_strings},
    {Code::WriterHeaderAlignmentField, &Dialect::header_alignment_field},
    {Code::WriterOffsetBeforeType, &Dialect::offset_before_type},
    {Code::WriterV1FieldWidths, &Dialect::narrow_widths},
};
constexpr unsigned kHypothesisCount = std::size(kHypotheses);

// What a hypothesis must leave no trace of: the structural findings, and the key bytes, names
// and leftover bytes a misparse turns into garbage (the catalogue's explains_garbage column).
bool explains_garbage(Code code) {
  return catalogue_entry(code).explains_garbage;
}

Dialect dialect_of(unsigned mask) {
  Dialect dialect;
  for (unsigned i = 0; i < kHypothesisCount; ++i) {
    if ((mask & (1U << i)) != 0) dialect.*kHypotheses[i].flag = true;
  }
  return dialect;
}

// The file's structure read under the dialect with the strict profile's rules: the findings
// (value contents are not checked: they do not depend on the dialect).
std::vector<Finding> read_structure(const Input& input, const StreamTail* tail, Dialect dialect,
                                    FileIndex& index, Sink::Details details,
                                    StructureChecks structure_checks) {
  const Options options;
  Sink sink(options, details);
  index = FileIndex{};
  index.input = input;
  index.tail = tail;
  index.dialect = dialect;
  structure_checks(index, sink);
  return sink.take();
}

// The first error of the file's structure (by offset), when the structure is broken.
std::optional<Finding> first_structural_error(const Input& input, const StreamTail* tail,
                                              StructureChecks structure_checks) {
  FileIndex index;
  const std::vector<Finding> findings =
      read_structure(input, tail, Dialect{}, index, Sink::Details::Kept, structure_checks);
  const bool broken = std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.severity == Severity::Error && breaks_structure(f.code);
  });
  if (!broken) return std::nullopt;
  std::optional<Finding> first;
  for (const Finding& f : findings) {
    if (f.severity == Severity::Error && (!first || f.offset < first->offset)) first = f;
  }
  return first;
}

// Under the dialect, every declared entry is read (at least one: an empty file has nothing a
// dialect could explain, and a cut header would otherwise read as an empty v1-width one), with
// no structural finding, no garbage key or name and nothing left over.
bool parses_cleanly(const Input& input, const StreamTail* tail, Dialect dialect, FileIndex& index,
                    StructureChecks structure_checks) {
  const std::vector<Finding> findings =
      read_structure(input, tail, dialect, index, Sink::Details::Dropped, structure_checks);
  if (!index.tensors_complete || (index.metadata.empty() && index.tensors.empty())) return false;
  return std::none_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.severity >= Severity::Warning && explains_garbage(f.code);
  });
}

std::string message(Code code, const FileIndex& index) {
  switch (code) {
    case Code::WriterNulTerminatedStrings: {
      // The hypothesis is needed only when the file has a string: a key or a tensor name.
      const std::uint64_t first =
          !index.metadata.empty() ? index.key_bytes_offset(0) + index.key_length(0)
          : !index.tensors.empty()
              ? index.tensors[0].name_offset + index.size_width() + index.name_length(0)
              : 0;
      return fmt::format(
          "the file parses cleanly when every string is read as its length, its bytes and a "
          "NUL byte (the first NUL at 0x{:x}): the writer terminates strings",
          first);
    }
    case Code::WriterHeaderAlignmentField:
      return fmt::format(
          "the file parses cleanly with a u32 alignment ({}) and 4 padding bytes after the "
          "counts at 0x{:x}: the writer puts an alignment field in the header",
          index.header_alignment, index.narrow() ? 16 : 24);
    case Code::WriterOffsetBeforeType: {
      // Needed only when the file has a tensor info.
      const bool any = !index.tensors.empty();
      return fmt::format(
          "the tensor infos parse cleanly with the offset written before the type (tensor[0] "
          "offset 0x{:x}, type {}): the writer swaps the two fields",
          any ? index.data_offset(0) : 0, any ? index.tensors[0].type : 0);
    }
    default:
      return fmt::format(
          "the file parses cleanly with 32-bit counts and lengths, the widths of version 1, "
          "although it declares version {}: the writer uses the old field widths",
          index.version);
  }
}

std::string_view hint(Code code) {
  switch (code) {
    case Code::WriterNulTerminatedStrings:
      return "a GGUF string is a u64 byte length followed by exactly that many bytes, with no "
             "terminator: stop writing a NUL after keys, string values, string array elements "
             "and tensor names";
    case Code::WriterHeaderAlignmentField:
      return "the header is 24 bytes (magic, version, tensor_count, kv_count) and has no "
             "alignment field: drop the 8 bytes after kv_count and, for an alignment other than "
             "32, write the metadata key general.alignment as a uint32";
    case Code::WriterOffsetBeforeType:
      return "a tensor info is name, n_dims, dims, then the ggml type (u32), then the offset "
             "(u64): write the type before the offset";
    default:
      return "since version 2, tensor_count, kv_count, string lengths, array counts and dims "
             "are all u64: write them as 64-bit numbers";
  }
}

}  // namespace

void diagnose_writer(const Input& input, const StreamTail* tail, Sink& sink,
                     StructureChecks structure_checks) {
  // Judged with fixed rules (the strict profile, default limits), not the user's profile and
  // overrides: whether the bytes lay out as GGUF, and where they first fail to, does not depend
  // on them; only the notes' severities do. Reported last, at the offset of that first error, so
  // the notes sort right after it.
  if (!sink.structure_broken()) return;  // the common case: no second read
  // Nothing to show (the four notes are disabled): none of the up to 16 extra reads either.
  if (std::none_of(std::begin(kHypotheses), std::end(kHypotheses),
                   [&](const Hypothesis& h) { return sink.enabled(h.code); })) {
    return;
  }
  const std::optional<Finding> anchor = first_structural_error(input, tail, structure_checks);
  if (!anchor) return;
  FileIndex index;
  for (int size = 1; size <= static_cast<int>(kHypothesisCount); ++size) {  // fewest first
    for (unsigned mask = 1; mask < (1U << kHypothesisCount); ++mask) {
      if (std::popcount(mask) != size ||
          !parses_cleanly(input, tail, dialect_of(mask), index, structure_checks))
        continue;
      for (unsigned i = 0; i < kHypothesisCount; ++i) {
        if ((mask & (1U << i)) == 0) continue;
        const Code code = kHypotheses[i].code;
        sink.report(code, anchor->offset, anchor->length, Field(anchor->path), hint(code), "{}",
                    message(code, index));
      }
      return;
    }
  }
}

}  // namespace ggufcheck::detail
