// Slurm's host lists (SLURM_STEP_NODELIST, SLURM_JOB_NODELIST): where
// Slurm put the first task, so the store, when nobody says otherwise.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace comm::bootstrap {

// The first host of a list in Slurm's compressed form: "node[01-04,07],gpu5"
// -> "node01" (zero padding kept), "rack[2-3]-n[5,9]" -> "rack2-n5",
// "head,node1" -> "head". nullopt when the text is not such a list (an
// unclosed bracket, an empty first host, a range that is not numeric).
std::optional<std::string> firstSlurmHost(std::string_view list);

}  // namespace comm::bootstrap
