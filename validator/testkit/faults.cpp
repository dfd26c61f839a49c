#include "faults.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "code_table.hpp"
#include "documents.hpp"
#include "fault_applier.hpp"
#include "ggufcheck/format.hpp"
#include "show.hpp"

namespace ggufcheck::testing {

const std::vector<FaultInfo>& fault_table() {
  static const std::vector<FaultInfo> kTable = [] {
    std::vector<FaultInfo> table;
    for (const CodeEntry& entry : code_table()) {
      for (const TargetedFault& f : entry.faults) {
        table.push_back({f.name, entry.code, f.exact, f.edit, f.apply});
      }
    }
    return table;
  }();
  return kTable;
}

const FaultInfo& fault_info(Fault fault) {
  for (const FaultInfo& info : fault_table()) {
    if (info.name == fault) return info;
  }
  throw std::out_of_range("no fault named " + std::string(fault));
}

std::vector<Fault> all_faults() {
  std::vector<Fault> out;
  for (const FaultInfo& info : fault_table()) out.push_back(info.name);
  return out;
}

std::vector<FindingKey> Corrupted::expected_in(Profile profile) const {
  return testing::expected_in(expected, profile);
}

bool Corrupted::targets(Profile profile) const {
  const std::vector<FindingKey> in = expected_in(profile);
  return std::any_of(in.begin(), in.end(), [&](const FindingKey& k) {
    return std::get<0>(k) == static_cast<std::uint16_t>(target) && std::get<1>(k) == finding_offset;
  });
}

namespace {

constexpr std::uint64_t kSizeWidth = 8;
constexpr std::uint64_t kHeaderSize = 24;
constexpr std::uint64_t kMinPair = 8 + 4 + 1;        // empty key, u8 value
constexpr std::uint64_t kMinTensor = 8 + 4 + 4 + 8;  // empty name, no dims

std::uint32_t byteswap32(std::uint32_t v) {
  return ((v & 0xFF) << 24) | ((v & 0xFF00) << 8) | ((v >> 8) & 0xFF00) | (v >> 24);
}

std::uint64_t nbytes_of(const Tensor& t) {
  return tensor_nbytes(t.type, t.dims).value_or(0);
}

std::uint64_t product_except(const std::vector<std::uint64_t>& dims, std::size_t skip) {
  std::uint64_t p = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d != skip) p *= dims[d];
  }
  return p;
}

// A value from a list of boundary candidates; `choice` picks, `random` fills the last slot.
std::uint64_t candidate(std::uint64_t choice, std::vector<std::uint64_t> options) {
  return options[pick(choice, options.size())];
}

std::uint64_t in_range(std::uint64_t choice, std::uint64_t lo, std::uint64_t hi) {
  if (hi <= lo) return lo;
  const std::uint64_t span = hi - lo;
  return span == kU64Max ? choice : lo + choice % (span + 1);
}

Value target_array(std::uint64_t choice) {
  switch (pick(choice, 7)) {
    case 0: return Value::array(ValueType::Uint8, {Value::u8(1), Value::u8(2)});
    case 1: return Value::array(ValueType::Int32, {});
    case 2: return Value::array(ValueType::Float32, {Value::f32(1.0F)});
    case 3: return Value::array(ValueType::String, {Value::string("a"), Value::string("bc")});
    case 4:
      return Value::array(ValueType::Bool,
                          {Value::boolean(false), Value::boolean(true), Value::boolean(true)});
    case 5: return Value::array(ValueType::Uint64, {Value::u64(kU64Max)});
    default: return Value::array(ValueType::String, {});
  }
}

bool is_token_id_key(std::string_view key) {
  constexpr std::string_view kPrefix = "tokenizer.ggml.";
  constexpr std::string_view kSuffix = "_token_id";
  return key.size() > kPrefix.size() + kSuffix.size() && key.substr(0, kPrefix.size()) == kPrefix &&
         key.substr(key.size() - kSuffix.size()) == kSuffix;
}

}  // namespace

Applier::Applier(const Corruption& c) : c_(c), m_(c.host) {
  out_.fault = c.fault;
  const FaultInfo& info = fault_info(c.fault);
  out_.target = info.target;
  out_.exact = info.exact;
}

std::uint64_t Applier::infos_start() const {
  return w_.layout.pairs.empty() ? kHeaderSize : w_.layout.pairs.back().end;
}
std::uint64_t Applier::rel(std::size_t i) const {
  return w_.layout.tensors[i].data_position - w_.layout.data_start;
}
std::uint64_t Applier::nbytes(std::size_t i) const {
  return nbytes_of(doc_c().tensors[i]);
}
std::uint64_t Applier::padded(std::size_t i) const {
  return round_up(nbytes(i), alignment());
}

void Applier::write() {
  w_ = m_.write();
  bytes_ = w_.bytes;
}
void Applier::patch(std::uint64_t offset, std::uint64_t value, std::uint32_t width) {
  put_uint(bytes_, offset, value, width, endian());
  out_.field_offset = offset;
}
void Applier::patch_byte(std::uint64_t offset, std::uint8_t value) {
  bytes_.at(static_cast<std::size_t>(offset)) = value;
  out_.field_offset = offset;
}
void Applier::cut(std::uint64_t at) {
  bytes_.resize(static_cast<std::size_t>(at));
  out_.field_offset = at;
}
void Applier::expect(Code code, std::uint64_t offset, std::uint64_t length,
                     std::array<bool, 3> profiles) {
  extra_.push_back({code, offset, length, profiles});
}

std::size_t Applier::insert_pair(KeyValue kv, std::uint64_t choice) {
  const std::size_t at = pick(choice, doc().metadata.size() + 1);
  doc().metadata.insert(doc().metadata.begin() + static_cast<std::ptrdiff_t>(at), std::move(kv));
  return at;
}
std::size_t Applier::insert_tensor(Tensor t, std::uint64_t choice) {
  if (is_quantized(t.type)) ensure_quantization_version(doc());
  const std::size_t at = pick(choice, doc().tensors.size() + 1);
  doc().tensors.insert(doc().tensors.begin() + static_cast<std::ptrdiff_t>(at), std::move(t));
  make_names_unique(doc());
  return at;
}
template <typename Predicate>
std::size_t Applier::tensor_where(Predicate ok, Tensor fallback, std::uint64_t choice) {
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < doc().tensors.size(); ++i) {
    if (ok(doc().tensors[i])) found.push_back(i);
  }
  if (!found.empty() && (choice & 3) != 0) return found[pick(choice >> 2, found.size())];
  return insert_tensor(std::move(fallback), choice >> 2);
}
Tensor Applier::target_tensor(std::string name, std::vector<std::uint64_t> dims,
                              std::uint32_t type) {
  Tensor t;
  t.name = std::move(name);
  t.dims = std::move(dims);
  t.type = type;
  return t;
}
std::string Applier::tensor_label(std::size_t i) const {
  return "tensor[" + std::to_string(i) + "] \"" + shown(doc_c().tensors[i].name) + "\"";
}
std::string Applier::pair_label(std::size_t i) const {
  return "kv[" + std::to_string(i) + "] \"" + shown(doc_c().metadata[i].key) + "\"";
}

bool Applier::header_counts_pass(std::uint64_t at) const {
  const std::uint64_t remaining = at - kHeaderSize;
  return tensor_count() <= remaining / kMinTensor && kv_count() <= remaining / kMinPair;
}
bool Applier::tensor_count_passes(std::uint64_t at) const {
  return tensor_count() <= (at - infos_start()) / kMinTensor;
}
template <typename T, typename Predicate>
const T& Applier::prefer(std::uint64_t choice, const std::vector<T>& all, Predicate ok) const {
  std::vector<const T*> good;
  for (const T& x : all) {
    if (ok(x)) good.push_back(&x);
  }
  if (good.empty() || (choice & 3) == 0) return pick_of(choice >> 2, all);
  return *good[pick(choice >> 2, good.size())];
}

bool Applier::header_counts_after_cut(std::uint64_t at) {
  const std::uint64_t remaining = at - kHeaderSize;
  if (tensor_count() > remaining / kMinTensor) expect(Code::ImpossibleCount, 8, kSizeWidth);
  if (kv_count() > remaining / kMinPair) {
    expect(Code::ImpossibleCount, 16, kSizeWidth);
    reach_.pairs = 0;
    reach_.tensors = 0;
    target_at(16);
    return false;
  }
  return true;
}
void Applier::cut_in_pair(std::size_t k, std::uint64_t at, Code code, std::uint64_t offset) {
  cut(at);
  reach_.pairs = k;
  reach_.tensors = 0;
  if (!header_counts_after_cut(at)) return;
  expect(code, offset, at - offset);
  target_at(offset);
}
void Applier::cut_in_tensor(std::size_t t, std::uint64_t at, Code code, std::uint64_t offset) {
  cut(at);
  const std::uint64_t remaining = at - infos_start();
  if (tensor_count() > remaining / kMinTensor) {
    expect(Code::ImpossibleCount, 8, kSizeWidth);
    reach_.tensors = 0;
    target_at(8);
    return;
  }
  reach_.tensors = t;
  expect(code, offset, at - offset);
  target_at(offset);
}

Corrupted Applier::run() {
  fault_info(c_.fault).apply(*this);
  out_.host = m_;
  out_.layout = w_.layout;
  out_.bytes = std::move(bytes_);
  if (out_.exact) {
    out_.expected = implied_findings(m_.doc, w_.layout, reach_);
    out_.expected.insert(out_.expected.end(), extra_.begin(), extra_.end());
  } else {
    out_.expected = extra_;
  }
  return out_;
}

// --- header ------------------------------------------------------------------------------------

void Applier::truncated_header() {
  write();
  const std::uint64_t at =
      candidate(ch(0), {0, 1, 3, 4, 5, 7, 8, 12, 15, 16, 20, 23, ch(1) % kHeaderSize});
  cut(at);
  reach_.header = at >= 8;  // the version is read (and noted) before the header size is checked
  reach_.pairs = 0;
  reach_.tensors = 0;
  expect(Code::TruncatedHeader, 0, at);
  target_at(0);
  say("cut the file to " + std::to_string(at) + " bytes");
}

void Applier::bad_magic() {
  write();
  const std::size_t i = pick(ch(0), 4);
  const auto mask = static_cast<std::uint8_t>(1 + pick(ch(1), 255));
  patch_byte(i, static_cast<std::uint8_t>(bytes_[i] ^ mask));
  reach_.header = false;
  reach_.pairs = 0;
  reach_.tensors = 0;
  expect(Code::BadMagic, 0, 4);
  target_at(0);
  say("magic byte " + std::to_string(i) + " ^= " + hex(mask));
}

void Applier::unsupported_version() {
  write();
  const auto unsupported = [](std::uint32_t raw) {
    const bool big = raw != 0 && (raw & 0xFFFFu) == 0;
    const std::uint32_t v = big ? byteswap32(raw) : raw;
    return v == 0 || v > 3;
  };
  auto raw = static_cast<std::uint32_t>(
      candidate(ch(0), {0, 4, 5, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x04000000, 0xFFFF0000, 0x00010000,
                        ch(1) & 0xFFFFFFFFu}));
  if (!unsupported(raw)) raw = 4;
  put_uint(bytes_, 4, raw, 4, Endian::Little);
  out_.field_offset = 4;
  reach_.header = false;
  reach_.pairs = 0;
  reach_.tensors = 0;
  if (raw != 0 && (raw & 0xFFFFu) == 0) expect(Code::ByteSwappedFile, 4, 4);
  expect(Code::UnsupportedVersion, 4, 4);
  target_at(4);
  say("version field := " + hex(raw) + " (as stored, little-endian)");
}

void Applier::obsolete_version() {
  write();
  patch(4, 1, 4);
  if (endian() == Endian::Big) expect(Code::ByteSwappedFile, 4, 4);
  expect(Code::ObsoleteVersion, 4, 4);
  target_at(4);
  say("version field := 1");
}

void Applier::old_version() {
  doc().version = 3;
  write();
  patch(4, 2, 4);
  expect(Code::OldVersion, 4, 4);
  target_at(4);
  say("version field 3 := 2");
}

void Applier::byte_swapped_version() {
  doc().endian = Endian::Little;
  write();
  put_uint(bytes_, 4, doc().version, 4, Endian::Big);
  out_.field_offset = 4;
  expect(Code::ByteSwappedFile, 4, 4);
  target_at(4);
  say("version field of a little-endian file := " + std::to_string(doc().version) +
      " stored big-endian");
}

void Applier::count_impossible(bool kv) {
  write();
  const std::uint64_t remaining = size() - kHeaderSize;
  const std::uint64_t min = kv ? kMinPair : kMinTensor;
  const std::uint64_t lo = remaining / min + 1;
  std::uint64_t v =
      candidate(ch(0), {lo, lo + 1, kPow63 - 1, kPow63, kPow63 + 1, kU64Max, kU64Max / min + 1,
                        0x055555555555555aULL, in_range(ch(1), lo, kU64Max)});
  v = std::max(v, lo);
  const std::uint64_t at = kv ? 16 : 8;
  patch(at, v, 8);
  reach_.tensors = 0;
  if (kv) reach_.pairs = 0;
  expect(Code::ImpossibleCount, at, kSizeWidth);
  target_at(at);
  say(std::string(kv ? "kv_count" : "tensor_count") + " := " + hex(v) + " (the " +
      std::to_string(remaining) + " bytes after the header hold at most " + std::to_string(lo - 1) +
      ")");
}

// --- metadata ----------------------------------------------------------------------------------

void Applier::truncated_metadata() {
  write();
  std::vector<std::size_t> pairs(kv_count());
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = i;
  const std::size_t k = prefer(
      ch(0), pairs, [this](std::size_t i) { return header_counts_pass(layout().pairs[i].offset); });
  const WrittenPair& p = layout().pairs[k];
  const Value& value = doc().metadata[k].value;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fields = {{p.key_offset, kSizeWidth},
                                                                 {p.type_offset, 4}};
  if (value.type == ValueType::String) {
    fields.emplace_back(p.value_offset, kSizeWidth);
  } else if (value.type == ValueType::Array) {
    fields.emplace_back(p.value_offset, 4);
    fields.emplace_back(p.value_offset + 4, kSizeWidth);
  } else {
    fields.emplace_back(p.value_offset, scalar_size(value.type));
  }
  const auto& field = pick_of(ch(1), fields);
  const std::uint64_t at = field.first + pick(ch(2), field.second);
  say("cut the file at " + hex(at) + ", inside " + pair_label(k) + " (field at " +
      hex(field.first) + ")");
  cut_in_pair(k, at, Code::TruncatedMetadata, p.offset);
}

void Applier::string_length() {
  write();
  struct Target {
    int kind;  // 0 key, 1 string value, 2 tensor name
    std::size_t index;
    std::uint64_t offset;
  };
  std::vector<Target> targets;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    targets.push_back({0, k, layout().pairs[k].key_offset});
    if (doc().metadata[k].value.type == ValueType::String) {
      targets.push_back({1, k, layout().pairs[k].value_offset});
    }
  }
  for (std::size_t t = 0; t < tensor_count(); ++t) {
    targets.push_back({2, t, layout().tensors[t].name_offset});
  }
  const Target& target = pick_of(ch(0), targets);
  const std::uint64_t remaining = size() - (target.offset + kSizeWidth);
  const std::uint64_t v =
      candidate(ch(1), {remaining + 1, remaining + 2, 1ULL << 32, kPow63 - 1, kPow63, kU64Max,
                        in_range(ch(2), remaining + 1, kU64Max)});
  patch(target.offset, v, 8);
  if (target.kind == 2) {
    reach_.tensors = target.index;
  } else {
    reach_.pairs = target.index;
    reach_.tensors = 0;
  }
  expect(Code::TruncatedString, target.offset, size() - target.offset);
  // ggml checks its 1 GiB limit first: both findings.
  if (v > kReferenceStringLimit) expect(Code::StringTooLong, target.offset, kSizeWidth);
  target_at(target.offset);
  say(std::string(target.kind == 0   ? "key length of " + pair_label(target.index)
                  : target.kind == 1 ? "string length of " + pair_label(target.index)
                                     : "name length of " + tensor_label(target.index)) +
      " := " + hex(v) + " (" + std::to_string(remaining) + " bytes left)");
}

void Applier::truncated_in_string() {
  write();
  struct Target {
    int kind;
    std::size_t index;
    std::uint64_t bytes;  // first byte of the string
    std::uint64_t length;
  };
  std::vector<Target> targets;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    const WrittenPair& p = layout().pairs[k];
    const KeyValue& kv = doc().metadata[k];
    if (!kv.key.empty()) targets.push_back({0, k, p.key_offset + kSizeWidth, kv.key.size()});
    if (kv.value.type == ValueType::String && !kv.value.text.empty()) {
      targets.push_back({1, k, p.value_offset + kSizeWidth, kv.value.text.size()});
    }
  }
  for (std::size_t t = 0; t < tensor_count(); ++t) {
    if (!doc().tensors[t].name.empty()) {
      targets.push_back(
          {2, t, layout().tensors[t].name_offset + kSizeWidth, doc().tensors[t].name.size()});
    }
  }
  const Target& target = prefer(ch(0), targets, [this](const Target& x) {
    return x.kind == 2 ? tensor_count_passes(x.bytes)
                       : header_counts_pass(layout().pairs[x.index].offset);
  });
  const std::uint64_t at = target.bytes + pick(ch(1), target.length);
  say("cut the file at " + hex(at) + ", inside the bytes of " +
      (target.kind == 2 ? tensor_label(target.index) + " name"
                        : pair_label(target.index) + (target.kind == 0 ? " key" : " value")));
  if (target.kind == 2) {
    cut_in_tensor(target.index, at, Code::TruncatedString, target.bytes - kSizeWidth);
  } else {
    cut_in_pair(target.index, at, Code::TruncatedString,
                target.kind == 0 ? layout().pairs[target.index].offset : target.bytes - kSizeWidth);
  }
}

void Applier::empty_key() {
  const std::size_t k = insert_pair({"", Value::u8(static_cast<std::uint8_t>(ch(1))), {}}, ch(0));
  write();
  const std::uint64_t at = layout().pairs[k].key_offset;
  out_.field_offset = at;
  expect(Code::EmptyKey, at, kSizeWidth);
  target_at(at);
  say("inserted kv[" + std::to_string(k) + "] with an empty key");
}

void Applier::duplicate_key() {
  const std::string_view arch = architecture_of(doc());
  std::vector<std::size_t> free;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (is_free_key(doc().metadata[k].key, arch)) free.push_back(k);
  }
  std::string key = "0fault.target";
  if (!free.empty() && (ch(0) & 1) != 0) {
    key = doc().metadata[free[pick(ch(0) >> 1, free.size())]].key;
  } else {
    insert_pair({key, Value::u8(1), {}}, ch(2));
  }
  insert_pair({key, Value::u8(2), {}}, ch(1));
  write();
  std::vector<std::size_t> at;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].key == key) at.push_back(k);
  }
  const WrittenPair& later = layout().pairs[at.at(1)];
  out_.field_offset = later.key_offset;
  expect(Code::DuplicateKey, later.key_offset, kSizeWidth + key.size());
  target_at(later.key_offset);
  say("kv[" + std::to_string(at[0]) + "] and kv[" + std::to_string(at[1]) + "] both have key \"" +
      shown(key) + "\"");
}

void Applier::key_byte(bool unconventional) {
  const std::string key = "0fault.target";
  const std::size_t k = insert_pair({key, Value::u8(7), {}}, ch(0));
  write();
  const std::uint64_t base = layout().pairs[k].key_offset;
  if (!unconventional) {
    const std::size_t i = pick(ch(1), key.size());
    const auto b = static_cast<std::uint8_t>(
        candidate(ch(2), {0x00, 0x01, 0x09, 0x0A, 0x1F, 0x7F, 0x80, 0xC3, 0xE9, 0xFF,
                          (ch(3) & 1) != 0 ? (ch(3) >> 1) % 0x20 : 0x80 + (ch(3) >> 1) % 0x80}));
    patch_byte(base + kSizeWidth + i, b);
    expect(Code::InvalidKeyBytes, base + kSizeWidth + i, 1);
    target_at(base + kSizeWidth + i);
    say("byte " + std::to_string(i) + " of the key of inserted kv[" + std::to_string(k) +
        "] \"0fault.target\" := " + hex(b));
    return;
  }
  static const std::string kBreaking = "AZM !\"#$%&'()*+,/:;<=>?@[\\]^`{|}~.";
  const char c = kBreaking[pick(ch(1), kBreaking.size())];
  // '.' breaks the key only where it makes an empty segment.
  const std::size_t i = c == '.' ? static_cast<std::size_t>(candidate(ch(2), {0, 5, 7, 12}))
                                 : pick(ch(2), key.size());
  patch_byte(base + kSizeWidth + i, static_cast<std::uint8_t>(c));
  expect(Code::UnconventionalKey, base, kSizeWidth + key.size());
  target_at(base);
  say("byte " + std::to_string(i) + " of the key of inserted kv[" + std::to_string(k) +
      "] \"0fault.target\" := '" + std::string(1, c) + "'");
}

void Applier::long_key() {
  const std::uint64_t length = candidate(ch(1), {65536, 65537, 65536 + ch(2) % 1000});
  const std::size_t k = insert_pair(
      {"0fault." + std::string(static_cast<std::size_t>(length - 7), 'a'), Value::u8(1), {}},
      ch(0));
  write();
  const std::uint64_t at = layout().pairs[k].key_offset;
  out_.field_offset = at;
  expect(Code::KeyTooLong, at, kSizeWidth + length);
  target_at(at);
  say("inserted kv[" + std::to_string(k) + "] with a key of " + std::to_string(length) + " bytes");
}

void Applier::value_type() {
  write();
  const std::size_t k = pick(ch(0), kv_count());
  const std::uint64_t v = candidate(
      ch(1), {13, 14, 0xFF, 0x100, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 13 + ch(2) % 0xFFFFFFF2u});
  const std::uint64_t at = layout().pairs[k].type_offset;
  patch(at, v, 4);
  reach_.pairs = k;
  reach_.tensors = 0;
  expect(Code::UnknownValueType, at, 4);
  target_at(at);
  say("value type of " + pair_label(k) + " := " + hex(v));
}

void Applier::array_type() {
  std::vector<std::size_t> arrays;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].value.type == ValueType::Array) arrays.push_back(k);
  }
  std::size_t k = 0;
  if (!arrays.empty() && (ch(0) & 1) != 0) {
    k = arrays[pick(ch(0) >> 1, arrays.size())];
  } else {
    k = insert_pair({"0fault.target", target_array(ch(3)), {}}, ch(0) >> 1);
  }
  write();
  const std::uint64_t v =
      candidate(ch(1), {13, 14, 0xFF, 0x7FFFFFFF, 0xFFFFFFFF, 13 + ch(2) % 0xFFFFFFF2u});
  const std::uint64_t at = layout().pairs[k].value_offset;
  patch(at, v, 4);
  reach_.pairs = k;
  reach_.tensors = 0;
  expect(Code::UnknownArrayType, at, 4);
  target_at(at);
  say("element type of " + pair_label(k) + " := " + hex(v));
}

void Applier::nested_array() {
  const auto element = static_cast<ValueType>(candidate(ch(1), {0, 8, 6, 7, 10, 5}));
  const std::size_t k = insert_pair({"0fault.target", Value::array(element, {}), {}}, ch(0));
  write();
  const std::uint64_t at = layout().pairs[k].value_offset;
  patch(at, 9, 4);
  expect(Code::NestedArray, at, 4);
  target_at(at);
  say("element type of the empty " + std::string(to_string(element)) + " array in inserted kv[" +
      std::to_string(k) + "] := 9 (array)");
}

void Applier::array_count() {
  std::vector<std::size_t> arrays;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].value.type == ValueType::Array) arrays.push_back(k);
  }
  std::size_t k = 0;
  if (!arrays.empty() && (ch(0) & 1) != 0) {
    k = arrays[pick(ch(0) >> 1, arrays.size())];
  } else {
    k = insert_pair({"0fault.target", target_array(ch(3)), {}}, ch(0) >> 1);
  }
  write();
  const ValueType element = doc().metadata[k].value.element_type;
  const std::uint64_t min = element == ValueType::String ? kSizeWidth : scalar_size(element);
  const std::uint64_t at = layout().pairs[k].value_offset + 4;
  const std::uint64_t remaining = size() - (at + kSizeWidth);
  const std::uint64_t lo = remaining / min + 1;
  std::uint64_t v = candidate(ch(1), {lo, lo + 1, (1ULL << 30) + 1, 1ULL << 32, kPow63, kU64Max,
                                      kU64Max / min + 1, in_range(ch(2), lo, kU64Max)});
  v = std::max(v, lo);
  patch(at, v, 8);
  reach_.pairs = k;
  reach_.tensors = 0;
  expect(Code::ImpossibleArrayCount, at, kSizeWidth);
  if (v > kReferenceArrayLimit) expect(Code::ArrayTooLong, at, kSizeWidth);  // ggml checks it first
  target_at(at);
  say("count of " + pair_label(k) + " (" + std::string(to_string(element)) + "[]) := " + hex(v) +
      " (" + std::to_string(remaining) + " bytes left)");
}

void Applier::bool_byte() {
  std::vector<std::size_t> scalars;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].value.type == ValueType::Bool) scalars.push_back(k);
  }
  const std::size_t mode = pick(ch(0), 3);
  std::size_t k = 0;
  std::size_t count = 0;  // 0: a scalar
  if (mode == 0 && !scalars.empty()) {
    k = scalars[pick(ch(0) >> 2, scalars.size())];
  } else if (mode != 2) {
    k = insert_pair({"0fault.target", Value::boolean((ch(3) & 1) != 0), {}}, ch(0) >> 2);
  } else {
    count = 1 + pick(ch(3), 4);
    std::vector<Value> items;
    for (std::size_t i = 0; i < count; ++i)
      items.push_back(Value::boolean(((ch(3) >> i) & 2) != 0));
    k = insert_pair({"0fault.target", Value::array(ValueType::Bool, items), {}}, ch(0) >> 2);
  }
  write();
  const auto b =
      static_cast<std::uint8_t>(candidate(ch(2), {2, 3, 0x7F, 0x80, 0xFF, 2 + ch(3) % 254}));
  std::uint64_t at = layout().pairs[k].value_offset;
  std::string where = pair_label(k);
  if (count != 0) {
    const std::size_t e = pick(ch(1), count);
    at += 4 + kSizeWidth + e;
    where += "[" + std::to_string(e) + "]";
  }
  patch_byte(at, b);
  expect(Code::NonCanonicalBool, at, 1);
  target_at(at);
  say("bool byte of " + where + " := " + hex(b));
}

void Applier::string_byte(bool nul) {
  static const std::vector<std::string> kPieces = {
      "", "a", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "abc def", "\x7f\t"};
  const std::string& before = pick_of(ch(1), kPieces);
  const std::string& after = pick_of(ch(1) >> 8, kPieces);
  const std::string text = before + "x" + after;
  const bool array = (ch(0) & 1) != 0;
  std::size_t k = 0;
  std::uint64_t start = 0;
  std::string where;
  if (!array) {
    k = insert_pair({"0fault.target", Value::string(text), {}}, ch(0) >> 1);
    write();
    start = layout().pairs[k].value_offset;
    where = pair_label(k);
  } else {
    const std::size_t count = 1 + pick(ch(2), 3);
    const std::size_t e = pick(ch(2) >> 4, count);
    std::vector<Value> items;
    for (std::size_t i = 0; i < count; ++i) {
      items.push_back(Value::string(i == e ? text : pick_of(ch(2) >> (8 + i), kPieces)));
    }
    k = insert_pair({"0fault.target", Value::array(ValueType::String, items), {}}, ch(0) >> 1);
    write();
    start = layout().pairs[k].value_offset + 4 + kSizeWidth;
    for (std::size_t i = 0; i < e; ++i) start += kSizeWidth + items[i].text.size();
    where = pair_label(k) + "[" + std::to_string(e) + "]";
  }
  const auto b =
      nul ? std::uint8_t{0}
          : static_cast<std::uint8_t>(candidate(ch(3), {0xC0, 0xC1, 0xF5, 0xF8, 0xFE, 0xFF}));
  patch_byte(start + kSizeWidth + before.size(), b);
  expect(nul ? Code::NulInString : Code::InvalidUtf8, start, kSizeWidth + text.size());
  target_at(start);
  say("byte " + std::to_string(before.size()) + " of the string \"" + shown(text) + "\" in " +
      where + " := " + hex(b));
}

// --- tensor infos ------------------------------------------------------------------------------

void Applier::truncated_tensor_info() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  std::vector<std::size_t> tensors(tensor_count());
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i] = i;
  const std::size_t t = prefer(ch(0), tensors, [this](std::size_t i) {
    return tensor_count_passes(layout().tensors[i].name_offset);
  });
  const WrittenTensor& wt = layout().tensors[t];
  const std::uint64_t n_dims = doc().tensors[t].dims.size();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fields = {{wt.name_offset, kSizeWidth},
                                                                 {wt.n_dims_offset, 4}};
  if (n_dims > 0) fields.emplace_back(wt.dims_offset, kSizeWidth * n_dims);
  fields.emplace_back(wt.type_offset, 4);
  fields.emplace_back(wt.offset_offset, kSizeWidth);
  const auto& field = pick_of(ch(1), fields);
  const std::uint64_t at = field.first + pick(ch(2), field.second);
  say("cut the file at " + hex(at) + ", inside " + tensor_label(t) + " (field at " +
      hex(field.first) + ")");
  cut_in_tensor(t, at, Code::TruncatedTensorInfo, wt.name_offset);
}

void Applier::long_tensor_name() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  const std::uint64_t length = candidate(ch(1), {64, 65, 66, 100, 64 + ch(2) % 200});
  doc().tensors[t].name = "0fault." + std::string(static_cast<std::size_t>(length - 7), 'n');
  write();
  const std::uint64_t at = layout().tensors[t].name_offset;
  out_.field_offset = at;
  expect(Code::TensorNameTooLong, at, kSizeWidth + length, {true, length > 64, true});
  target_at(at);
  say("name of tensor[" + std::to_string(t) + "] := " + std::to_string(length) + " bytes");
}

void Applier::empty_tensor_name() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  doc().tensors[t].name.clear();
  write();
  const std::uint64_t at = layout().tensors[t].name_offset;
  out_.field_offset = at;
  expect(Code::EmptyTensorName, at, kSizeWidth);
  target_at(at);
  say("name of tensor[" + std::to_string(t) + "] := \"\"");
}

void Applier::duplicate_tensor_name() {
  while (tensor_count() < 2) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  const std::size_t i = pick(ch(0), tensor_count());
  std::size_t j = pick(ch(1), tensor_count() - 1);
  if (j >= i) ++j;
  doc().tensors[i].name = doc().tensors[j].name;
  write();
  const std::size_t later = std::max(i, j);
  const std::uint64_t at = layout().tensors[later].name_offset;
  out_.field_offset = layout().tensors[i].name_offset;
  expect(Code::DuplicateTensorName, at, kSizeWidth + doc().tensors[i].name.size());
  target_at(at);
  say("name of tensor[" + std::to_string(i) + "] := the name of tensor[" + std::to_string(j) +
      "] \"" + shown(doc().tensors[j].name) + "\"");
}

void Applier::tensor_name_duplicates(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string identity = names[i].substr(0, names[i].find('\0'));
    if (!seen.insert(identity).second) {
      expect(Code::DuplicateTensorName, layout().tensors[i].name_offset,
             kSizeWidth + names[i].size());
    }
  }
}

void Applier::tensor_name_byte() {
  const auto has_ascii = [](const Tensor& t) {
    return std::any_of(t.name.begin(), t.name.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  };
  const std::size_t t = tensor_where(has_ascii, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  std::vector<std::size_t> positions;
  const std::string& name = doc().tensors[t].name;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (static_cast<unsigned char>(name[i]) < 0x80) positions.push_back(i);
  }
  const std::size_t i = pick_of(ch(1), positions);
  const auto b = static_cast<std::uint8_t>(
      candidate(ch(2), {0x00, 0x01, 0x09, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xF5, 0xFF}));
  const std::uint64_t at = layout().tensors[t].name_offset + kSizeWidth + i;
  patch_byte(at, b);
  expect(Code::InvalidTensorNameBytes, at, 1);
  target_at(at);
  std::vector<std::string> names;
  for (const Tensor& x : doc().tensors) names.push_back(x.name);
  names[t][i] = static_cast<char>(b);
  tensor_name_duplicates(names);
  say("byte " + std::to_string(i) + " of the name of " + tensor_label(t) + " := " + hex(b));
}

void Applier::extra_dims() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  Tensor& x = doc().tensors[t];
  while (x.dims.size() < kMaxDims) x.dims.push_back(1);
  const std::size_t extra = 1 + pick(ch(1), 4);
  for (std::size_t e = 0; e < extra; ++e) x.dims.push_back(1 + pick(ch(2) >> (2 * e), 3));
  write();
  const std::uint64_t at = layout().tensors[t].n_dims_offset;
  out_.field_offset = at;
  expect(Code::TooManyDims, at, 4);
  target_at(at);
  say("dims of tensor[" + std::to_string(t) + "] := " + std::to_string(x.dims.size()) + " dims");
}

void Applier::n_dims_huge() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const WrittenTensor& wt = layout().tensors[t];
  const std::uint64_t remaining = size() - (wt.n_dims_offset + 4);
  const std::uint64_t lo = std::max<std::uint64_t>(5, remaining / kSizeWidth + 1);
  const std::uint64_t v = candidate(
      ch(1), {lo, lo + 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, in_range(ch(2), lo, 0xFFFFFFFF)});
  patch(wt.n_dims_offset, v, 4);
  reach_.tensors = t;
  expect(Code::TooManyDims, wt.n_dims_offset, 4);
  expect(Code::TruncatedTensorInfo, wt.name_offset, size() - wt.name_offset);
  target_at(wt.n_dims_offset);
  say("n_dims of " + tensor_label(t) + " := " + hex(v) + " (" + std::to_string(remaining) +
      " bytes left)");
}

void Applier::dim_fault(DimEdit edit) {
  const auto any_dims = [](const Tensor& x) { return !x.dims.empty(); };
  std::size_t t = 0;
  switch (edit) {
    case DimEdit::ElementCount:
      t = tensor_where(
          [](const Tensor& x) {
            for (std::size_t d = 0; d < x.dims.size(); ++d) {
              if (product_except(x.dims, d) >= 2) return true;
            }
            return false;
          },
          target_tensor("0fault.tensor", {4, 2}), ch(0));
      break;
    case DimEdit::RowNotBlockMultiple:
      t = tensor_where(
          [](const Tensor& x) { return !x.dims.empty() && tensor_type(x.type)->block_size > 1; },
          target_tensor("0fault.tensor", {32}, 8), ch(0));
      break;
    case DimEdit::ByteSize:
      t = tensor_where(
          [](const Tensor& x) {
            return !x.dims.empty() && (x.type == 0 || x.type == 26 || x.type == 27 || x.type == 28);
          },
          target_tensor("0fault.tensor", {4}), ch(0));
      break;
    default: t = tensor_where(any_dims, target_tensor("0fault.tensor", {4}), ch(0)); break;
  }
  write();
  const Tensor& x = doc().tensors[t];
  const WrittenTensor& wt = layout().tensors[t];
  const std::uint64_t all_dims = kSizeWidth * x.dims.size();
  std::size_t d = pick(ch(1), x.dims.size());
  std::uint64_t v = 0;
  switch (edit) {
    case DimEdit::Negative: {
      v = candidate(ch(2), {kPow63, kPow63 + 1, kU64Max, kPow63 | ch(3)});
      expect(Code::NegativeDim, wt.dims_offset + kSizeWidth * d, kSizeWidth);
      target_at(wt.dims_offset + kSizeWidth * d);
      break;
    }
    case DimEdit::Zero: {
      v = 0;
      expect(Code::ZeroDim, wt.dims_offset + kSizeWidth * d, kSizeWidth);
      target_at(wt.dims_offset + kSizeWidth * d);
      // The tensor is now empty: its bytes are a gap before the next tensor, or trailing bytes.
      if (t + 1 < tensor_count()) {
        expect(Code::NonContiguousLayout, layout().tensors[t + 1].offset_offset, kSizeWidth);
      } else {
        const std::uint64_t from = data_start() + rel(t);
        expect(Code::TrailingBytes, from, size() - from);
      }
      break;
    }
    case DimEdit::ElementCount: {
      std::vector<std::size_t> ds;
      for (std::size_t k = 0; k < x.dims.size(); ++k) {
        if (product_except(x.dims, k) >= 2) ds.push_back(k);
      }
      d = pick_of(ch(1), ds);
      const std::uint64_t p = product_except(x.dims, d);
      const std::uint64_t lo = (kPow63 + p - 1) / p;
      v = candidate(ch(2), {lo, kPow63 - 1, in_range(ch(3), lo, kPow63 - 1)});
      expect(Code::ElementCountOverflow, wt.dims_offset, all_dims);
      target_at(wt.dims_offset);
      break;
    }
    case DimEdit::RowNotBlockMultiple: {
      d = 0;
      const std::uint64_t block = tensor_type(x.type)->block_size;
      v = block * pick(ch(2), 4) + 1 + pick(ch(3), block - 1);
      expect(Code::RowNotBlockMultiple, wt.dims_offset, kSizeWidth);
      target_at(wt.dims_offset);
      break;
    }
    default: {  // ByteSizeOverflow: elements < 2^63, elements x bytes per element >= 2^64
      const std::uint64_t p = product_except(x.dims, d);
      const std::uint64_t per = tensor_type(x.type)->type_size;
      const std::uint64_t q = per == 4 ? 1ULL << 62 : 1ULL << 61;
      const std::uint64_t lo = (q + p - 1) / p;
      const std::uint64_t hi = (kPow63 - 1) / p;
      v = candidate(ch(2), {lo, hi, in_range(ch(3), lo, hi)});
      expect(Code::ByteSizeOverflow, wt.dims_offset, all_dims);
      target_at(wt.dims_offset);
      break;
    }
  }
  patch(wt.dims_offset + kSizeWidth * d, v, 8);
  say("dims[" + std::to_string(d) + "] of " + tensor_label(t) + " (" + tensor_type_name(x.type) +
      ", " + std::to_string(x.dims.size()) + " dims) := " + hex(v));
}

void Applier::tensor_type_fault(bool unknown) {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const std::uint64_t v =
      unknown ? candidate(ch(1), {43, 44, 0xFF, 0x7FFFFFFF, 0xFFFFFFFF, 43 + ch(2) % 0xFFFFFFD4u})
              : candidate(ch(1), {4, 5, 31, 32, 33, 36, 37, 38});
  const std::uint64_t at = layout().tensors[t].type_offset;
  patch(at, v, 4);
  reach_.type_changed.insert(t);
  expect(unknown ? Code::UnknownTensorType : Code::RemovedTensorType, at, 4);
  target_at(at);
  say("type of " + tensor_label(t) + " (" + tensor_type_name(doc().tensors[t].type) +
      ") := " + std::to_string(v));
}

void Applier::offset_wraps() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const std::uint64_t units = padded(t) / alignment();
  const std::uint64_t j = candidate(ch(1), {1, units, 1 + ch(2) % units});
  const std::uint64_t v = 0 - alignment() * j;
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, v, 8);
  expect(Code::ByteSizeOverflow, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  expect(Code::TensorOutOfBounds, at, kSizeWidth);
  target_at(at);
  say("offset of " + tensor_label(t) + " := " + hex(v) + " (padded size " + hex(padded(t)) + ")");
}

void Applier::new_tensor_type() {
  const auto swappable = [](const Tensor& x) {
    if (x.dims.empty()) return false;
    return (x.type == 23 && x.dims[0] % 256 == 0) ||
           ((x.type == 2 || x.type == 20) && x.dims[0] % 64 == 0);
  };
  const std::size_t t = tensor_where(swappable,
                                     (ch(3) & 1) != 0 ? target_tensor("0fault.tensor", {256}, 23)
                                                      : target_tensor("0fault.tensor", {64}, 2),
                                     ch(0));
  write();
  const std::uint32_t from = doc().tensors[t].type;
  const std::uint32_t to = from == 23 ? 39 : 40;
  const std::uint64_t at = layout().tensors[t].type_offset;
  patch(at, to, 4);
  reach_.type_changed.insert(t);
  expect(Code::NewTensorType, at, 4);
  target_at(at);
  say("type of " + tensor_label(t) + " " + tensor_type_name(from) + " := " + tensor_type_name(to) +
      " (same byte size)");
}

void Applier::scalar_tensor() {
  const std::size_t t = tensor_where(
      [](const Tensor& x) { return !x.dims.empty() && tensor_type(x.type)->block_size == 1; },
      target_tensor("0fault.tensor", {4}), ch(0));
  doc().tensors[t].dims.clear();
  doc().tensors[t].data.reset();
  write();
  out_.field_offset = layout().tensors[t].n_dims_offset;
  target_at(layout().tensors[t].n_dims_offset);  // implied by the content: GGUF3015
  say("dims of " + tensor_label(t) + " := none (a scalar)");
}

// --- data layout -------------------------------------------------------------------------------

void Applier::misaligned_offset() {
  const std::uint64_t a = effective_alignment(doc());
  const std::size_t t = tensor_where(
      [a](const Tensor& x) { return nbytes_of(x) % a != 0; },
      target_tensor("0fault.tensor", {1 + pick(ch(3), static_cast<std::size_t>(a - 1))}, 24),
      ch(0));
  write();
  const std::uint64_t slack = padded(t) - nbytes(t);
  const std::uint64_t k = 1 + pick(ch(1), slack);
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, rel(t) + k, 8);
  expect(Code::MisalignedOffset, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  say("offset of " + tensor_label(t) + " += " + std::to_string(k) +
      " (padding after it: " + std::to_string(slack) + ")");
}

void Applier::overlapping_offset() {
  while (tensor_count() < 2) insert_tensor(target_tensor("0fault.tensor", {8}), ch(3));
  for (Tensor& x : doc().tensors) x.data.reset();  // moved data must not read as padding
  const std::size_t t = 1 + pick(ch(0), tensor_count() - 1);
  write();
  const std::uint64_t a = alignment();
  const std::uint64_t units = (nbytes(t - 1) + a - 1) / a;
  const std::uint64_t p = rel(t - 1) + a * pick(ch(1), units);
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, p, 8);
  expect(Code::OverlappingTensors, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  if (t + 1 == tensor_count()) {  // the last tensor's old place becomes trailing bytes
    std::uint64_t max_end = p + nbytes(t);
    for (std::size_t i = 0; i < t; ++i) max_end = std::max(max_end, rel(i) + nbytes(i));
    const std::uint64_t padded_end = round_up(max_end, a);
    const std::uint64_t data_size = size() - data_start();
    if (data_size > padded_end) {
      expect(Code::TrailingBytes, data_start() + padded_end, data_size - padded_end);
    }
  }
  say("offset of " + tensor_label(t) + " := " + hex(p) + ", inside tensor[" +
      std::to_string(t - 1) + "] at " + hex(rel(t - 1)) + "+" + hex(nbytes(t - 1)));
}

void Applier::offset_out_of_bounds() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const std::uint64_t a = alignment();
  const std::uint64_t data_size = size() - data_start();
  const std::uint64_t lo = round_up(data_size - nbytes(t) + 1, a);
  const std::uint64_t hi = (kU64Max - padded(t)) / a * a;  // offset + padded size still fits
  const std::uint64_t v = candidate(
      ch(1), {lo, data_size, data_size + a, kPow63, hi, lo + a * (ch(2) % ((hi - lo) / a + 1))});
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, v, 8);
  expect(Code::TensorOutOfBounds, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  say("offset of " + tensor_label(t) + " := " + hex(v) + " (data section " + hex(data_size) +
      " bytes, tensor " + hex(nbytes(t)) + ")");
}

void Applier::truncated_data() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  std::uint64_t max_end = 0;
  for (std::size_t i = 0; i < tensor_count(); ++i) max_end = std::max(max_end, rel(i) + nbytes(i));
  const std::size_t i = pick(ch(1), tensor_count());
  const std::uint64_t at =
      candidate(ch(0), {data_start(), data_start() + max_end - 1, data_start() + rel(i),
                        data_start() + rel(i) + nbytes(i) - 1, data_start() + ch(2) % max_end});
  cut(at);
  const std::uint64_t data_size = at - data_start();
  bool first = true;
  for (std::size_t j = 0; j < tensor_count(); ++j) {
    if (rel(j) > data_size || nbytes(j) > data_size - rel(j)) {
      expect(Code::TensorOutOfBounds, layout().tensors[j].offset_offset, kSizeWidth);
      if (first) target_at(layout().tensors[j].offset_offset);
      first = false;
    }
  }
  say("cut the file at " + hex(at) + ", inside the tensor data (" + hex(data_start()) + ".." +
      hex(data_start() + max_end) + ")");
}

void Applier::gap() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  const std::size_t t = pick(ch(0), tensor_count());
  const std::uint64_t units = 1 + pick(ch(1), 3);
  const std::uint64_t gap_bytes = units * alignment();
  std::vector<std::uint64_t> offsets;
  for (std::size_t i = 0; i < tensor_count(); ++i) offsets.push_back(rel(i));
  for (std::size_t i = 0; i < tensor_count(); ++i) {
    doc().tensors[i].offset = offsets[i] + (i >= t ? gap_bytes : 0);
  }
  Tensor& x = doc().tensors[t];
  std::vector<std::uint8_t> blob(static_cast<std::size_t>(gap_bytes), 0);
  const std::vector<std::uint8_t> data =
      x.data.value_or(std::vector<std::uint8_t>(static_cast<std::size_t>(nbytes(t)), 0));
  blob.insert(blob.end(), data.begin(), data.end());
  x.data = std::move(blob);
  write();
  const std::uint64_t at = layout().tensors[t].offset_offset;
  out_.field_offset = at;
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  say("a gap of " + std::to_string(gap_bytes) + " bytes before the data of " + tensor_label(t) +
      " (offsets from it on shifted)");
}

void Applier::padding_byte() {
  const auto regions = [this] {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    const WrittenLayout& l = layout();
    if ((tensor_count() > 0 || m_.pad_when_no_tensors) && l.infos_end < l.data_start) {
      out.emplace_back(l.infos_end, l.data_start);
    }
    for (std::size_t i = 0; i < tensor_count(); ++i) {
      const std::uint64_t end = l.tensors[i].data_position + nbytes(i);
      const std::uint64_t pad_end = l.tensors[i].data_position + padded(i);
      if (end < pad_end) out.emplace_back(end, pad_end);
    }
    return out;
  };
  write();
  auto found = regions();
  if (found.empty()) {
    insert_tensor(target_tensor("0fault.tensor", {1}, 24), ch(3));
    write();
    found = regions();
  }
  const auto& region = pick_of(ch(0), found);
  const std::uint64_t at = region.first + pick(ch(1), region.second - region.first);
  const auto b = static_cast<std::uint8_t>(1 + pick(ch(2), 255));
  patch_byte(at, b);
  expect(Code::NonzeroPadding, at, region.second - at);
  target_at(at);
  say("padding byte at " + hex(at) + " (padding " + hex(region.first) + ".." + hex(region.second) +
      ") := " + hex(b));
}

void Applier::truncated_before_data() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  if (layout().infos_end == layout().data_start) {
    // A 41-byte tensor info (odd) moves the end of the infos off the alignment.
    insert_tensor(target_tensor("0fault.pad", {4}), ch(3) >> 8);
    write();
  }
  const std::uint64_t begin = layout().infos_end;
  const std::uint64_t at = begin + pick(ch(0), layout().data_start - begin);
  cut(at);
  expect(Code::TruncatedBeforeData, begin, at - begin);
  target_at(begin);
  say("cut the file at " + hex(at) + ", inside the padding " + hex(begin) + ".." +
      hex(layout().data_start));
}

void Applier::truncated_final_padding() {
  const std::uint64_t a = effective_alignment(doc());
  if (tensor_count() == 0 || nbytes_of(doc().tensors.back()) % a == 0) {
    doc().tensors.push_back(
        target_tensor("0fault.tensor", {1 + pick(ch(2), static_cast<std::size_t>(a - 1))}, 24));
    make_names_unique(doc());
  }
  write();
  const std::size_t last = tensor_count() - 1;
  const std::uint64_t end = data_start() + rel(last) + nbytes(last);
  const std::uint64_t at = end + pick(ch(1), size() - end);
  cut(at);
  expect(Code::MissingFinalPadding, end, at - end);
  target_at(end);
  say("cut the file at " + hex(at) + ", inside the padding after the last tensor (" + hex(end) +
      ".." + hex(size()) + ")");
}

void Applier::trailing_bytes() {
  if (tensor_count() == 0) m_.pad_when_no_tensors = true;
  write();
  const std::uint64_t a = alignment();
  const std::uint64_t k = candidate(ch(0), {1, 2, a - 1, a, a + 1, 1 + ch(1) % 100});
  const std::uint64_t old = size();
  const std::vector<std::uint8_t> extra =
      (ch(2) & 1) != 0 ? seeded_bytes(ch(3) | 1, k) : std::vector<std::uint8_t>(k, std::uint8_t{0});
  bytes_.insert(bytes_.end(), extra.begin(), extra.end());
  out_.field_offset = old;
  expect(Code::TrailingBytes, old, k);
  target_at(old);
  say("appended " + std::to_string(k) + " bytes at " + hex(old));
}

// --- standard keys -----------------------------------------------------------------------------

void Applier::set_alignment_32() {
  if (KeyValue* kv = find_pair(doc(), "general.alignment")) {
    kv->value = Value::u32(32);
  } else {
    insert_pair({"general.alignment", Value::u32(32), {}}, ch(3));
  }
}

void Applier::alignment_fault(AlignmentEdit edit) {
  if (edit == AlignmentEdit::Type || edit == AlignmentEdit::Zero) {
    set_alignment_32();  // the alignment then used is the one the file was written with
  } else {
    doc().tensors.clear();  // nothing depends on the alignment
    m_.pad_when_no_tensors = false;
    if (find_pair(doc(), "general.alignment") == nullptr) {
      insert_pair({"general.alignment", Value::u32(32), {}}, ch(3));
    }
  }
  write();
  const std::size_t k = *pair_index(doc(), "general.alignment");
  const WrittenPair& p = layout().pairs[k];
  if (edit == AlignmentEdit::Type) {
    const std::uint64_t v = candidate(ch(1), {5, 6});
    patch(p.type_offset, v, 4);
    expect(Code::AlignmentWrongType, p.type_offset, 4);
    target_at(p.type_offset);
    say("type of general.alignment (32) := " + std::string(to_string(static_cast<ValueType>(v))));
    return;
  }
  std::uint64_t v = 0;
  if (edit == AlignmentEdit::NotPowerOfTwo) {
    v = candidate(ch(1), {3, 5, 6, 7, 9, 12, 24, 33, 48, 65537, 0x7FFFFFFF, 0xFFFFFFFF,
                          3 + ch(2) % 0xFFFFFFFD});
    if (is_power_of_two(v)) ++v;
  } else if (edit == AlignmentEdit::Below8) {
    v = candidate(ch(1), {1, 2, 4, 3, 5, 6, 7, 12, 20, 100, 1 + ch(2) % 0xFFFFFFFE});
    if (v % 8 == 0) ++v;
  } else if (edit == AlignmentEdit::Above65536) {
    v = candidate(ch(1), {65537, 131072, 1 << 20, 1ULL << 31, 0xFFFFFFFF,
                          65537 + ch(2) % (0xFFFFFFFF - 65537)});
  }
  patch(p.value_offset, v, 4);
  target_at(p.value_offset);
  if (v == 0) expect(Code::AlignmentZero, p.value_offset, 4);
  if (v != 0 && !is_power_of_two(v)) expect(Code::AlignmentNotPowerOfTwo, p.value_offset, 4);
  if (v != 0 && v % 8 != 0) expect(Code::AlignmentNotMultipleOf8, p.value_offset, 4);
  if (v > 65536) expect(Code::AlignmentTooLarge, p.value_offset, 4);
  say("general.alignment := " + std::to_string(v) +
      (edit == AlignmentEdit::Zero ? "" : " (in a file without tensors)"));
}

void Applier::key_letter(std::string_view key) {
  std::size_t quantized = 0;
  const bool quantization = key == "general.quantization_version";
  if (quantization) {
    tensor_where([](const Tensor& x) { return is_quantized(x.type); },
                 target_tensor("0fault.tensor", {32}, 8), ch(3));
    ensure_quantization_version(doc());
  }
  write();
  const std::size_t k = *pair_index(doc(), key);
  std::vector<std::size_t> letters;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] >= 'a' && key[i] <= 'z') letters.push_back(i);
  }
  const std::size_t i = pick_of(ch(0), letters);
  const char c =
      static_cast<char>('a' + (key[i] - 'a' + 1 + static_cast<int>(pick(ch(1), 25))) % 26);
  const std::uint64_t at = layout().pairs[k].key_offset + kSizeWidth + i;
  patch_byte(at, static_cast<std::uint8_t>(c));
  if (quantization) {
    while (!is_quantized(doc().tensors[quantized].type)) ++quantized;
    const std::uint64_t type_at = layout().tensors[quantized].type_offset;
    expect(Code::MissingQuantizationVersion, type_at, 4);
    target_at(type_at);
  } else {
    expect(Code::MissingArchitecture, 0, kHeaderSize);
    target_at(0);
  }
  std::string renamed(key);
  renamed[i] = c;
  say("key " + std::string(key) + " := " + renamed);
}

void Applier::standard_key_type() {
  struct Target {
    std::size_t index;
    bool element;  // patch the array element type instead of the value type
    std::vector<std::uint64_t> types;
  };
  const auto targets = [this] {
    std::vector<Target> out;
    const std::string arch(architecture_of(doc()));
    for (std::size_t k = 0; k < kv_count(); ++k) {
      const KeyValue& kv = doc().metadata[k];
      const ValueType type = kv.value.type;
      const bool count_key =
          !arch.empty() &&
          (kv.key == arch + ".context_length" || kv.key == arch + ".embedding_length" ||
           kv.key == arch + ".block_count" || kv.key == arch + ".vocab_size");
      if ((kv.key == "general.quantization_version" || kv.key == "general.file_type" ||
           is_token_id_key(kv.key) || count_key) &&
          type == ValueType::Uint32) {
        out.push_back({k, false, {5, 6}});
      } else if (count_key && type == ValueType::Uint64) {
        out.push_back({k, false, {11, 12}});
      } else if (kv.key.rfind("tokenizer.ggml.add_", 0) == 0 && type == ValueType::Bool) {
        out.push_back({k, false, {0, 1}});
      } else if (kv.key == "tokenizer.ggml.scores" && type == ValueType::Array &&
                 kv.value.element_type == ValueType::Float32) {
        out.push_back({k, true, {4, 5}});
      } else if (kv.key == "tokenizer.ggml.token_type" && type == ValueType::Array &&
                 kv.value.element_type == ValueType::Int32) {
        out.push_back({k, true, {4, 6}});
      }
    }
    return out;
  };
  if (targets().empty() || (ch(0) & 3) == 0) {
    if (find_pair(doc(), "general.file_type") == nullptr) {
      insert_pair({"general.file_type", Value::u32(1), {}}, ch(3));
    }
  }
  write();
  const std::vector<Target> found = targets();
  const Target& target = pick_of(ch(0) >> 2, found);
  const WrittenPair& p = layout().pairs[target.index];
  const std::uint64_t v = pick_of(ch(1), target.types);
  patch(target.element ? p.value_offset : p.type_offset, v, 4);
  expect(Code::KeyWrongType, p.type_offset, 4);
  target_at(p.type_offset);
  say(std::string(target.element ? "element type" : "type") + " of " + pair_label(target.index) +
      " := " + std::string(to_string(static_cast<ValueType>(v))));
}

void Applier::ensure_vocab(std::size_t at_least) {
  KeyValue* tokens = find_pair(doc(), "tokenizer.ggml.tokens");
  if (tokens == nullptr) {
    std::vector<Value> items;
    for (std::size_t i = 0; i < std::max<std::size_t>(at_least, 2); ++i) {
      items.push_back(Value::string(std::string(1, static_cast<char>('a' + i))));
    }
    doc().metadata.push_back(
        {"tokenizer.ggml.tokens", Value::array(ValueType::String, std::move(items)), {}});
    return;
  }
  while (tokens->value.items.size() < at_least) {
    tokens->value.items.push_back(Value::string("t"));
    if (KeyValue* scores = find_pair(doc(), "tokenizer.ggml.scores")) {
      scores->value.items.push_back(Value::f32(0));
    }
    if (KeyValue* types = find_pair(doc(), "tokenizer.ggml.token_type")) {
      types->value.items.push_back(Value::i32(1));
    }
    tokens = find_pair(doc(), "tokenizer.ggml.tokens");
  }
}

void Applier::tokenizer_array_length() {
  ensure_vocab(1);
  const std::size_t vocab = find_pair(doc(), "tokenizer.ggml.tokens")->value.items.size();
  std::vector<std::string> present;
  for (const char* name : {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
    if (find_pair(doc(), name) != nullptr) present.emplace_back(name);
  }
  if (present.empty()) {
    doc().metadata.push_back(
        {"tokenizer.ggml.scores",
         Value::array(ValueType::Float32, std::vector<Value>(vocab, Value::f32(0))),
         {}});
    present.emplace_back("tokenizer.ggml.scores");
  }
  const std::string name = pick_of(ch(0), present);
  std::vector<Value>& items = find_pair(doc(), name)->value.items;
  const bool shorter = !items.empty() && (ch(1) & 1) != 0;
  if (shorter) {
    items.pop_back();
  } else {
    items.push_back(name == "tokenizer.ggml.scores" ? Value::f32(0) : Value::i32(1));
  }
  write();
  const std::size_t k = *pair_index(doc(), name);
  const std::uint64_t at = layout().pairs[k].value_offset + 4;
  out_.field_offset = at;
  expect(Code::TokenizerLengthMismatch, at, kSizeWidth);
  target_at(at);
  say(name + " := one element " + (shorter ? "fewer" : "more") + " than the " +
      std::to_string(vocab) + " tokens");
}

void Applier::token_id() {
  ensure_vocab(1);
  const auto ids = [this] {
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < kv_count(); ++k) {
      if (is_token_id_key(doc().metadata[k].key) &&
          doc().metadata[k].value.type == ValueType::Uint32) {
        out.push_back(k);
      }
    }
    return out;
  };
  if (ids().empty()) insert_pair({"tokenizer.ggml.bos_token_id", Value::u32(0), {}}, ch(3));
  write();
  const std::size_t k = pick_of(ch(0), ids());
  const std::uint64_t vocab = find_pair(doc(), "tokenizer.ggml.tokens")->value.items.size();
  const std::uint64_t v = candidate(ch(1), {vocab, vocab + 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                                            vocab + ch(2) % (0x100000000ULL - vocab)});
  const std::uint64_t at = layout().pairs[k].value_offset;
  patch(at, v, 4);
  expect(Code::TokenIdOutOfRange, at, 4);
  target_at(at);
  say(pair_label(k) + " := " + std::to_string(v) + " (vocabulary of " + std::to_string(vocab) +
      ")");
}

Corrupted apply(const Corruption& corruption) {
  return Applier(corruption).run();
}

}  // namespace ggufcheck::testing
