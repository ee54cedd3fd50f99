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
// Under --keep-going, the end of rank N, written for every rank that fails:
// "rank N (pid P on HOST) what happened".
inline std::string rankFailed(int rank) { return "commrun/rank_failed/" + std::to_string(rank); }

}  // namespace comm::bootstrap::commrun_keys
