#include "bootstrap/job_secret.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "common/error.h"
#include "common/hmac.h"
#include "common/socket.h"
#include "common/unique_fd.h"

namespace comm::bootstrap {
namespace {

constexpr size_t kRandomBytes = 32;
// Longer than any secret anyone writes by hand; bounds what a wrong path
// (a large file) makes this process read.
constexpr size_t kMaxSecretBytes = 4096;
// How often a rank looks for the file that the store's host creates: a
// look is one stat(), and ranks start within moments of each other.
constexpr auto kFilePoll = std::chrono::milliseconds(20);

std::string checked(std::string secret, std::string_view source) {
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.size() < kMinSecretBytes) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} holds a job secret of {} bytes; at least {} are needed (commrun makes {})",
         source, secret.size(), kMinSecretBytes, 2 * kRandomBytes);
  }
  return secret;
}

// The secret in `path`, or nullopt when there is no such file. Refuses a
// file that another user could have written or can read.
std::optional<std::string> readSecretFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::nullopt;
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {} cannot be opened: {}", path, errnoText(errno));
  }
  struct stat status {};
  if (fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode)) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {} is not a regular file", path);
  }
  if (status.st_uid != geteuid()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {} belongs to uid {}, not to this process's uid {}", path,
         status.st_uid, geteuid());
  }
  if ((status.st_mode & 077) != 0) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {} has mode {:04o}: others may read it; it must be 0600",
         path, status.st_mode & 07777);
  }
  std::string secret(kMaxSecretBytes, '\0');
  size_t got = 0;
  while (got < secret.size()) {
    const ssize_t n = read(fd.get(), secret.data() + got, secret.size() - got);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {}: read failed: {}", path, errnoText(errno));
    got += static_cast<size_t>(n);
  }
  secret.resize(got);
  return checked(std::move(secret), "COMM_JOB_SECRET_FILE " + path);
}

// Writes a new secret to a private temporary file and links it in under
// `path` only when complete; returns the secret now in `path` (another
// process's, if it won the race).
std::string createSecretFile(const std::string& path) {
  // A default place (LaunchInfo::secretFile) may not exist yet; made
  // private, as the file will be.
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  if (!directory.empty() && mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {}: cannot create its directory: {}", path, errnoText(errno));
  }
  const std::string temporary = fmt::format("{}.{}.tmp", path, getpid());
  UniqueFd fd(open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {}: cannot create {}: {}", path, temporary, errnoText(errno));
  }
  const std::string secret = makeJobSecret();
  const std::string text = secret + "\n";
  const bool written = write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int writeError = errno;
  fd.reset();
  const bool linked = written && link(temporary.c_str(), path.c_str()) == 0;
  const int linkError = errno;
  unlink(temporary.c_str());
  if (!written)
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {}: write failed: {}", path, errnoText(writeError));
  if (!linked && linkError != EEXIST) {
    fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {}: cannot create it: {}", path, errnoText(linkError));
  }
  if (std::optional<std::string> found = readSecretFile(path)) return *found;
  fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE {} vanished while it was being created", path);
}

}  // namespace

std::string makeJobSecret() { return hexDigits(randomBytes(kRandomBytes)); }

std::optional<std::string> findJobSecret(const EnvLookup& lookup, bool createFile, Deadline deadline) {
  if (std::optional<std::string> secret = lookup("COMM_JOB_SECRET")) return checked(*secret, "COMM_JOB_SECRET");
  std::optional<std::string> path = lookup("COMM_JOB_SECRET_FILE");
  if (!path) return std::nullopt;
  if (path->empty()) fail(COMM_ERR_INVALID_ARGUMENT, "COMM_JOB_SECRET_FILE is set but empty");
  if (createFile) {
    if (std::optional<std::string> found = readSecretFile(*path)) return found;
    return createSecretFile(*path);
  }
  for (;;) {
    if (std::optional<std::string> found = readSecretFile(*path)) return found;
    if (deadline.expired()) {
      fail(COMM_ERR_TIMEOUT,
           "COMM_JOB_SECRET_FILE {} does not exist, and the process that hosts the store did not create it in time",
           *path);
    }
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(kFilePoll, deadline.remaining()));
  }
}

}  // namespace comm::bootstrap
