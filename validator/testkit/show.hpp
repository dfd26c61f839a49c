// Readable descriptions of documents, values, generated inputs and faults, as a counterexample
// prints (RapidCheck finds the showValue overloads by argument-dependent lookup).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "faults.hpp"
#include "ggufcheck/writer.hpp"
#include "models.hpp"
#include "mutations.hpp"

namespace ggufcheck::testing {

// Bytes shown escaped, as the validator shows them.
[[nodiscard]] std::string shown(std::string_view bytes, std::size_t max = 48);
[[nodiscard]] std::string hex(std::uint64_t v);
[[nodiscard]] std::string tensor_type_name(std::uint32_t id);

[[nodiscard]] std::string value_text(const Value& v, std::size_t max_items = 6);
[[nodiscard]] std::string tensor_text(const Tensor& t);
[[nodiscard]] std::string document_text(const Document& doc);

void showValue(const Key& key, std::ostream& os);
void showValue(const Alignment& a, std::ostream& os);
void showValue(const ValidModel& m, std::ostream& os);
void showValue(const AnyDocument& d, std::ostream& os);
void showValue(const Corruption& c, std::ostream& os);
void showValue(const Mutation& m, std::ostream& os);
void showValue(const HugeClaim& c, std::ostream& os);

}  // namespace ggufcheck::testing

namespace ggufcheck {

void showValue(const Value& value, std::ostream& os);
void showValue(const Tensor& tensor, std::ostream& os);
void showValue(const Document& doc, std::ostream& os);

}  // namespace ggufcheck
