// RapidCheck generators for GGUF documents, files and faults (style.md: Nix-style test support).
//
// Deterministic given RapidCheck's random source (the definitions are generators.cpp):
//
// - rc::Arbitrary<ggufcheck::Value>: a canonical metadata value of any of the 13 types, arrays of
//   every element type (nested ones too), empty strings and arrays, non-ASCII UTF-8, boundary
//   numbers (0, 1, max, min, NaN, infinities, denormals).
// - rc::Arbitrary<ggufcheck::Tensor>: a tensor info of any non-removed ggml type, 0..4 dims,
//   block-multiple shapes, sometimes a zero dim (zero-size tensor); byte sizes stay small.
// - rc::Arbitrary<Key>: a metadata key, conventional or not, that names no standard key.
// - rc::Arbitrary<Alignment>: a power of two 1..4096.
// - rc::Arbitrary<ValidModel>: a whole file strict passes (v2/v3, little/big-endian) together
//   with implied_findings(), the notes (and the big-endian error) its content implies.
// - rc::Arbitrary<AnyDocument>: any document the writer can write and read_document reads back
//   (v1/v2/v3, both byte orders, any key/string/name bytes, nested arrays, hostile shapes).
// - rc::Arbitrary<Corruption>: one targeted fault (the code table's, code_table.cpp: one or more
//   per catalogue code a single edit can cause) applied to a generated valid file via the writer's
//   WrittenLayout; apply() returns the broken bytes with the exact findings each profile must
//   report and the offset of the finding the fault targets.
// - rc::Arbitrary<Mutation>: a blind edit (byte flip, 4- or 8-byte boundary overwrite).
//
// Every type has a showValue overload (show.hpp) so a counterexample prints as a readable
// description. Everything but the generators is in the rapidcheck-free testkit (models.hpp,
// expected.hpp, faults.hpp, mutations.hpp).
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>

#include "expected.hpp"
#include "faults.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"
#include "models.hpp"
#include "mutations.hpp"
#include "show.hpp"

namespace ggufcheck::testing::gen {

using rc::Gen;

struct ValueOptions {
  std::uint32_t version = 3;  // 1: types 0..9 only
  std::uint32_t depth = 2;    // how deep arrays of arrays may nest (0: none)
  bool canonical = true;      // valid UTF-8 without NUL, bools 0 or 1
  std::size_t max_items = 5;
};

struct TensorOptions {
  bool zero_dims = false;  // a dim may be 0 (a zero-size tensor; GGUF3008 in strict)
};

[[nodiscard]] Gen<Key> any_key();
// Valid UTF-8 of up to max_chars code points (controls and every encoding length), often empty.
[[nodiscard]] Gen<std::string> any_text(std::size_t max_chars);
[[nodiscard]] Gen<Value> any_value(ValueOptions options);
// A tensor of a usable type whose row is a whole number of blocks; small (at most a few
// kilobytes). Its data is unset (the writer writes zeros) or seeded bytes of exactly nbytes.
[[nodiscard]] Gen<Tensor> tensor(TensorOptions options = {});
[[nodiscard]] Gen<Alignment> alignment(std::uint32_t min = 1);
[[nodiscard]] Gen<ValidModel> valid_model();
[[nodiscard]] Gen<AnyDocument> any_document();
[[nodiscard]] Gen<Corruption> corruption();
[[nodiscard]] Gen<Mutation> mutation();
[[nodiscard]] Gen<HugeClaim> huge_claim();

}  // namespace ggufcheck::testing::gen

namespace rc {

template <>
struct Arbitrary<ggufcheck::Value> {
  static Gen<ggufcheck::Value> arbitrary() { return ggufcheck::testing::gen::any_value({}); }
};

template <>
struct Arbitrary<ggufcheck::Tensor> {
  static Gen<ggufcheck::Tensor> arbitrary() {
    ggufcheck::testing::gen::TensorOptions options;
    options.zero_dims = true;
    return ggufcheck::testing::gen::tensor(options);
  }
};

template <>
struct Arbitrary<ggufcheck::testing::Key> {
  static Gen<ggufcheck::testing::Key> arbitrary() { return ggufcheck::testing::gen::any_key(); }
};

template <>
struct Arbitrary<ggufcheck::testing::Alignment> {
  static Gen<ggufcheck::testing::Alignment> arbitrary() {
    return ggufcheck::testing::gen::alignment();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::ValidModel> {
  static Gen<ggufcheck::testing::ValidModel> arbitrary() {
    return ggufcheck::testing::gen::valid_model();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::AnyDocument> {
  static Gen<ggufcheck::testing::AnyDocument> arbitrary() {
    return ggufcheck::testing::gen::any_document();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::Corruption> {
  static Gen<ggufcheck::testing::Corruption> arbitrary() {
    return ggufcheck::testing::gen::corruption();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::Mutation> {
  static Gen<ggufcheck::testing::Mutation> arbitrary() {
    return ggufcheck::testing::gen::mutation();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::HugeClaim> {
  static Gen<ggufcheck::testing::HugeClaim> arbitrary() {
    return ggufcheck::testing::gen::huge_claim();
  }
};

}  // namespace rc
