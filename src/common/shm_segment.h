// A POSIX shared-memory segment (shm_open + mmap) that ranks on one node map
// to talk without the kernel. The name only serves to find the segment: it is
// unlinked as soon as every rank that needs it has mapped it, so a job killed
// later leaves nothing in /dev/shm; a job killed before that leaves a name
// that carries its creator's pid, and sweepAbandonedSegments removes it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <string>

namespace comm {

class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  // Unmaps; the creator also removes the name if nobody has.
  ~ShmSegment();

  // A new zero-filled segment of `bytes` under `name` (which must not exist),
  // readable and writable by this user only (mode 0600, whatever the umask);
  // throws comm::Error (COMM_ERR_TRANSPORT) naming the call and the cause.
  static ShmSegment create(const std::string& name, size_t bytes);
  // Maps the segment another process of the job created once it has reached
  // `bytes`. Polls while the name is missing or the segment is still
  // shorter, and throws COMM_ERR_REMOTE as soon as `creator` has exited or
  // COMM_ERR_TIMEOUT once `timeout` has passed, naming `owner` ("rank 3").
  // A segment that is not this user's or not of mode 0600 is never mapped:
  // another user may have planted it to read or change what ranks put
  // there; that throws COMM_ERR_TRANSPORT naming `source`, where the name
  // came from ("store key board/3").
  static ShmSegment open(const std::string& name, size_t bytes, pid_t creator, const std::string& owner,
                         const std::string& source, std::chrono::milliseconds timeout);

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Removes the name (whoever maps the segment last does, creator or not);
  // the mappings stay valid. Only the first call has an effect.
  void unlink();

 private:
  ShmSegment(std::string name, void* data, size_t size, bool creator)
      : name_(std::move(name)), data_(data), size_(size), creator_(creator), linked_(true) {}
  void release() noexcept;

  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool creator_ = false;
  bool linked_ = false;  // the name may still exist as far as this process knows
};

// "/comm.<pid namespace>.<pid>.<nonce>": unique on the node, and tells a
// later job whether its creator still lives.
std::string shmSegmentName(pid_t pid, uint64_t nonce);

// The first touch of a page of a shared segment can cost far more than the
// mapping that MAP_POPULATE already set up: a hypervisor that keeps shadow
// page tables builds its own entry only then, and MADV_POPULATE_WRITE does
// not help. Paid inside messages, that made the first collectives through
// each ring slot or board entry many times slower than the rest, enough to
// skew a short benchmark's median (docs/dev/performance-history.md, "First
// calls"). So each user of a segment touches the pages it will use once,
// when it sets them up:
//  - touchForRead loads one byte of every page of [begin, begin + bytes);
//  - touchForWrite stores a zero there, so only on memory whose contents no
//    other process reads yet (a ring slot or board entry not yet published).
void touchForRead(const void* begin, size_t bytes);
void touchForWrite(void* begin, size_t bytes);

// A random nonce for shmSegmentName (from std::random_device).
uint64_t randomShmNonce();

// Unlinks the segments of this pid namespace whose creator has exited (a
// job killed while starting up): all of them, or with `creators` only
// those that one of these processes made (commrun, once its ranks have
// exited: a rank killed before it unlinked its names leaves nothing behind
// its job). Never fails; what it cannot remove it leaves.
void sweepAbandonedSegments(std::span<const pid_t> creators = {});

}  // namespace comm
