// The job's secret: what every process of one job knows and no other
// process does, proven on every connection (common/handshake.h). It comes
// from the environment (or a comm_config_t):
//   COMM_JOB_SECRET       the secret itself (commrun sets it for its ranks);
//   COMM_JOB_SECRET_FILE  a file holding it, for launchers that cannot hand
//                         each rank a variable: readable by its owner only,
//                         who must be this process's user. The process that
//                         hosts the store creates it, with a new random
//                         secret, when it does not exist; the others wait
//                         for it.
// docs/security.md says what this protects against and what it does not.
#pragma once

#include <optional>
#include <string>

#include "bootstrap/launch_environment.h"
#include "common/deadline.h"

namespace comm::bootstrap {

// Secrets shorter than this are refused: they could be guessed.
inline constexpr size_t kMinSecretBytes = 16;

// A new random secret (hexadecimal digits, so that it fits an environment
// variable and a text file).
std::string makeJobSecret();

// The secret COMM_JOB_SECRET or COMM_JOB_SECRET_FILE gives, or nullopt when
// neither is set. With `createFile`, a missing file is created (atomically:
// a reader never sees it half written); without, it is waited for until
// `deadline`. Throws comm::Error: COMM_ERR_INVALID_ARGUMENT naming the
// variable or the file and what is wrong with it (too short, owned by
// another user, readable by others), COMM_ERR_TIMEOUT when the file never
// appears.
std::optional<std::string> findJobSecret(const EnvLookup& lookup, bool createFile, Deadline deadline);

}  // namespace comm::bootstrap
