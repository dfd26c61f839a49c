#include "ggufcheck/format.hpp"

#include <algorithm>
#include <array>

#include "util/checked.hpp"

namespace ggufcheck {

using detail::checked_mul;

namespace {

constexpr std::array<TensorTypeInfo, kTensorTypeCount> kTensorTypes = {{
    {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},      {4, "Q4_2", 0, 0},        {5, "Q4_3", 0, 0},
    {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},      {8, "Q8_0", 32, 34},
    {9, "Q8_1", 32, 36},      {10, "Q2_K", 256, 84},    {11, "Q3_K", 256, 110},
    {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},   {14, "Q6_K", 256, 210},
    {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
    {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},   {20, "IQ4_NL", 32, 18},
    {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},   {23, "IQ4_XS", 256, 136},
    {24, "I8", 1, 1},         {25, "I16", 1, 2},        {26, "I32", 1, 4},
    {27, "I64", 1, 8},        {28, "F64", 1, 8},        {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},       {31, "Q4_0_4_4", 0, 0},   {32, "Q4_0_4_8", 0, 0},
    {33, "Q4_0_8_8", 0, 0},   {34, "TQ1_0", 256, 54},   {35, "TQ2_0", 256, 66},
    {36, "IQ4_NL_4_4", 0, 0}, {37, "IQ4_NL_4_8", 0, 0}, {38, "IQ4_NL_8_8", 0, 0},
    {39, "MXFP4", 32, 17},    {40, "NVFP4", 64, 36},    {41, "Q1_0", 128, 18},
    {42, "Q2_0", 64, 18},
}};

}  // namespace

std::optional<std::uint64_t> tensor_nbytes(std::uint32_t type_id,
                                           std::span<const std::uint64_t> dims) {
  const TensorTypeInfo* type = tensor_type(type_id);
  if (type == nullptr || type->removed() || dims.size() > kMaxDims) return std::nullopt;
  // A dim of 0 makes the tensor empty whatever the other dims are: its size is exactly 0, and
  // no partial product of the other dims may be taken for an overflow. Otherwise every product
  // is checked, so dims whose product wraps to 0 modulo 2^64 are never an empty tensor.
  const bool empty = std::find(dims.begin(), dims.end(), 0) != dims.end();
  std::uint64_t elements = 1;
  for (const std::uint64_t d : dims) {
    if (d >= kInt64Limit) return std::nullopt;
    if (!empty && (!checked_mul(elements, d, elements) || elements >= kInt64Limit)) {
      return std::nullopt;
    }
  }
  const std::uint64_t ne0 = dims.empty() ? 1 : dims[0];
  if (ne0 % type->block_size != 0) return std::nullopt;
  if (empty) return 0;
  std::uint64_t nbytes = ne0 / type->block_size;
  if (!checked_mul(nbytes, type->type_size, nbytes)) return std::nullopt;
  for (std::size_t d = 1; d < dims.size(); ++d) {
    if (!checked_mul(nbytes, dims[d], nbytes)) return std::nullopt;
  }
  return nbytes;
}

std::uint32_t scalar_size(ValueType type) {
  switch (type) {
    case ValueType::Uint8:
    case ValueType::Int8:
    case ValueType::Bool: return 1;
    case ValueType::Uint16:
    case ValueType::Int16: return 2;
    case ValueType::Uint32:
    case ValueType::Int32:
    case ValueType::Float32: return 4;
    case ValueType::Uint64:
    case ValueType::Int64:
    case ValueType::Float64: return 8;
    case ValueType::String:
    case ValueType::Array: break;
  }
  return 0;
}

bool is_valid_value_type(std::uint32_t raw, std::uint32_t version) {
  return raw < (version == 1 ? kValueTypeCountV1 : kValueTypeCount);
}

std::string_view to_string(ValueType type) {
  static constexpr std::array<std::string_view, kValueTypeCount> kNames = {
      "uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  const auto index = static_cast<std::uint32_t>(type);
  return index < kNames.size() ? kNames[index] : std::string_view("unknown");
}

bool TensorTypeInfo::quantized() const {
  switch (id) {
    case 0:
    case 1:
    case 24:
    case 25:
    case 26:
    case 27:
    case 28:
    case 30: return false;
    default: return !removed();
  }
}

const TensorTypeInfo* tensor_type(std::uint32_t id) {
  return id < kTensorTypes.size() ? &kTensorTypes[id] : nullptr;
}

std::optional<std::uint32_t> find_tensor_type(std::string_view name) {
  for (const auto& info : kTensorTypes) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

}  // namespace ggufcheck
