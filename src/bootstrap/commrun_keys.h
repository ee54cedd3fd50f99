// The store keys through which commrun tells the ranks of a job about the
// job: written by tools/commrun, read by the library (core/world.cc).
#pragma once

#include <string>

namespace comm::bootstrap::commrun_keys {

// The job's first failure, "rank N (pid P on HOST) what happened".
inline constexpr const char* kFailed = "commrun/failed";
// How many failures the job's commruns have seen: the one that makes it 1
// writes kFailed.
inline constexpr const char* kFailures = "commrun/failures";
// Set when commrun runs with --keep-going: a failure is that rank's alone,
// not the end of every rank.
inline constexpr const char* kKeepGoing = "commrun/keep_going";
// Under --keep-going, the end of launch slot S, written for every process
// that fails: "rank N (pid P on HOST) what happened" when S is rank N's own
// slot (S = N), "rank N (launch slot S, pid P on HOST) what happened" for a
// replacement (--replace).
inline std::string rankFailed(int slot) { return "commrun/rank_failed/" + std::to_string(slot); }
// How many replacements (--replace) the job's commruns have taken a launch
// slot for: the commrun whose add makes it k starts its replacement with
// COMM_LAUNCH_SLOT = COMM_WORLD_SIZE + k - 1, so that no two share a slot.
inline constexpr const char* kReplacements = "commrun/replacements";

}  // namespace comm::bootstrap::commrun_keys
