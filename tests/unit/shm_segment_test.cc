// Shared-memory segments whose names come from the store (common/
// shm_segment.h): a rank maps only its own user's segments of mode 0600;
// one planted by another user, or readable by others, is refused with an
// error naming the store key the name came from.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "common/error.h"
#include "common/shm_segment.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::ShmSegment;
using namespace std::chrono_literals;

namespace {

constexpr size_t kBytes = 4096;
constexpr uid_t kNobody = 65534;

std::string freshName() { return comm::shmSegmentName(getpid(), comm::randomShmNonce()); }

// Creates `name` with `mode`, as user `uid` when this process may switch
// to it (root), else as this process's user.
void plant(const std::string& name, mode_t mode, uid_t uid) {
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    if (uid != geteuid() && setuid(uid) != 0) _exit(3);
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, mode);
    if (fd < 0 || fchmod(fd, mode) != 0 || ftruncate(fd, kBytes) != 0) _exit(2);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

template <typename Call>
comm::Error errorOf(Call&& call) {
  try {
    call();
  } catch (const comm::Error& error) {
    return error;
  }
  fail_msg("expected a comm::Error");
  return comm::Error(COMM_OK, "");
}

void assertContains(const std::string& text, const std::string& part) {
  if (text.find(part) == std::string::npos) fail_msg("'%s' does not contain '%s'", text.c_str(), part.c_str());
}

void aSegmentOthersCanReadIsRefused(void**) {
  const std::string name = freshName();
  plant(name, 0644, geteuid());
  comm::Error error = errorOf([&] { ShmSegment::open(name, kBytes, getpid(), "rank 1", "store key addr/1", 10s); });
  shm_unlink(name.c_str());
  assert_int_equal(error.status(), COMM_ERR_TRANSPORT);
  assertContains(error.what(), "store key addr/1");
  assertContains(error.what(), "mode 0644");
}

void aSegmentOfAnotherUserIsRefused(void**) {
  if (geteuid() != 0) skip();  // only root can plant one as another user
  const std::string name = freshName();
  plant(name, 0600, kNobody);
  comm::Error error = errorOf([&] { ShmSegment::open(name, kBytes, getpid(), "rank 0", "store key board/7", 10s); });
  shm_unlink(name.c_str());
  assert_int_equal(error.status(), COMM_ERR_TRANSPORT);
  assertContains(error.what(), "store key board/7");
  assertContains(error.what(), "belongs to uid 65534");
}

void aPrivateSegmentOfThisUserIsMapped(void**) {
  const std::string name = freshName();
  // A umask that takes the owner's write bit must not make the segment unusable.
  const mode_t old = umask(0277);
  ShmSegment created = ShmSegment::create(name, kBytes);
  umask(old);
  static_cast<char*>(created.data())[10] = 42;
  ShmSegment opened = ShmSegment::open(name, kBytes, getpid(), "rank 0", "store key board/1", 10s);
  assert_int_equal(static_cast<char*>(opened.data())[10], 42);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(aSegmentOthersCanReadIsRefused),
      cmocka_unit_test(aSegmentOfAnotherUserIsRefused),
      cmocka_unit_test(aPrivateSegmentOfThisUserIsMapped),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
