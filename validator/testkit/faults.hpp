// Targeted faults: one edit of a valid file (ValidModel) per catalogue code a single edit can
// cause, applied through the writer's WrittenLayout. apply() returns the broken bytes with the
// exact findings each profile must report and the offset of the finding the fault targets. Each
// fault is written once, in the entry of the code it targets in the code table (code_table.cpp);
// the edits are the Applier's (fault_applier.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "expected.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"
#include "models.hpp"

namespace ggufcheck::testing {

class Applier;

// A fault is named by its name in the code table: "truncated-header", "kv-count", ...
using Fault = std::string_view;

struct FaultInfo {
  Fault name;
  Code target;  // the code the fault exists for: that of its entry in the code table
  bool exact;   // false: the rest of the file is re-read in another layout (see the edit)
  std::string_view edit;
  void (*apply)(Applier&);  // makes the edit
};

// Every fault, in the order of the code table (by the code it targets).
[[nodiscard]] const std::vector<FaultInfo>& fault_table();
// std::out_of_range for a name no fault has.
[[nodiscard]] const FaultInfo& fault_info(Fault fault);
[[nodiscard]] std::vector<Fault> all_faults();

// A fault, the valid file it is applied to, and the numbers that choose the target field, the
// position in it and the new value (each taken modulo the number of options, so shrinking them
// towards 0 picks the first, simplest option).
struct Corruption {
  Fault fault = "truncated-header";
  ValidModel host;
  std::array<std::uint64_t, 4> choices{};
};

// The broken file and what validating it must report.
struct Corrupted {
  Fault fault = "truncated-header";
  Code target{};
  bool exact = true;
  ValidModel host;       // after the fault's preparation (what was written before the edit)
  WrittenLayout layout;  // of the written host
  ByteVector bytes;
  std::uint64_t field_offset = 0;    // where the edit is (the cut, the patched field)
  std::uint64_t finding_offset = 0;  // where the target finding points
  std::string edit;                  // what was done, with offsets and values
  std::vector<Expect> expected;      // every finding (exact), or those required (not exact)

  [[nodiscard]] std::vector<FindingKey> expected_in(Profile profile) const;
  // Whether the target finding is among the expected ones in the profile.
  [[nodiscard]] bool targets(Profile profile) const;
};

[[nodiscard]] Corrupted apply(const Corruption& corruption);

}  // namespace ggufcheck::testing
