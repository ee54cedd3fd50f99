#include "common/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <utility>

#include "common/deadline.h"
#include "common/error.h"
#include "common/log.h"
#include "common/process_exited.h"

namespace comm {
namespace {

constexpr const char* kPrefix = "comm.";
// How long open() sleeps between looks at a segment its creator has not
// finished yet (creators are in the same phase of startup: milliseconds).
constexpr auto kOpenPoll = std::chrono::microseconds(200);

unsigned long pidNamespace() {
  struct stat ns {};
  return stat("/proc/self/ns/pid", &ns) == 0 ? ns.st_ino : 0;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

void* mapShared(int fd, size_t bytes, const std::string& name) {
  // Populated now: the rings' pages are touched on the latency path otherwise.
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED) {
    fail(COMM_ERR_TRANSPORT, "shm: mmap of {} bytes of {} failed: {}", bytes, name, std::strerror(errno));
  }
  return data;
}

}  // namespace

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      creator_(std::exchange(other.creator_, false)),
      linked_(std::exchange(other.linked_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    creator_ = std::exchange(other.creator_, false);
    linked_ = std::exchange(other.linked_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::release() noexcept {
  // Peers that never came to map it cannot remove it: the creator does.
  if (creator_) unlink();
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
}

void ShmSegment::unlink() {
  // Another rank may have removed it already: ENOENT is no failure.
  if (linked_) shm_unlink(name_.c_str());
  linked_ = false;
}

ShmSegment ShmSegment::create(const std::string& name, size_t bytes) {
  FileDescriptor fd(shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
  if (fd.get() < 0) fail(COMM_ERR_TRANSPORT, "shm: shm_open({}) failed: {}", name, std::strerror(errno));
  // From here on the name exists: the segment object owns it.
  ShmSegment segment(name, nullptr, 0, true);
  // The umask may have taken bits that open() on the other ranks requires.
  if (fchmod(fd.get(), 0600) != 0) {
    fail(COMM_ERR_TRANSPORT, "shm: making {} private failed: {}", name, std::strerror(errno));
  }
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    fail(COMM_ERR_TRANSPORT, "shm: sizing {} to {} bytes failed: {}", name, bytes, std::strerror(errno));
  }
  segment.data_ = mapShared(fd.get(), bytes, name);
  segment.size_ = bytes;
  return segment;
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes, pid_t creator, const std::string& owner,
                            const std::string& source, std::chrono::milliseconds timeout) {
  Deadline deadline(timeout);
  for (;;) {
    FileDescriptor fd(shm_open(name.c_str(), O_RDWR, 0));
    if (fd.get() < 0 && errno != ENOENT) {
      fail(COMM_ERR_TRANSPORT, "shm: shm_open({}) of {} (from {}) failed: {}", name, owner, source,
           std::strerror(errno));
    }
    struct stat status {};
    if (fd.get() >= 0 && fstat(fd.get(), &status) != 0) {
      fail(COMM_ERR_TRANSPORT, "shm: fstat of {} (from {}) failed: {}", name, source, std::strerror(errno));
    }
    if (fd.get() >= 0 && status.st_uid != geteuid()) {
      fail(COMM_ERR_TRANSPORT,
           "shm: {} of {}, named by {}, belongs to uid {}, not to this job's uid {}; refusing to map it", name, owner,
           source, status.st_uid, geteuid());
    }
    if (fd.get() >= 0 && (status.st_mode & 07777) != 0600) {
      fail(COMM_ERR_TRANSPORT, "shm: {} of {}, named by {}, has mode {:04o}, not 0600; refusing to map it", name, owner,
           source, status.st_mode & 07777);
    }
    if (fd.get() >= 0 && static_cast<size_t>(status.st_size) >= bytes) {
      return ShmSegment(name, mapShared(fd.get(), bytes, name), bytes, false);
    }
    if (processExited(creator)) {
      fail(COMM_ERR_REMOTE, "shm: {} (pid {}) exited before its shared memory {} was ready", owner, creator, name);
    }
    if (deadline.expired()) {
      fail(COMM_ERR_TIMEOUT, "shm: {} (pid {}) did not create its shared memory {} within {} ms", owner, creator, name,
           timeout.count());
    }
    std::this_thread::sleep_for(kOpenPoll);
  }
}

std::string shmSegmentName(pid_t pid, uint64_t nonce) {
  return fmt::format("/{}{}.{}.{:016x}", kPrefix, pidNamespace(), pid, nonce);
}

uint64_t randomShmNonce() {
  std::random_device device;
  return uint64_t{device()} << 32 | device();
}

void sweepAbandonedSegments(std::span<const pid_t> creators) {
  DIR* directory = opendir("/dev/shm");
  if (directory == nullptr) return;
  const std::string mine = fmt::format("{}{}.", kPrefix, pidNamespace());
  while (dirent* entry = readdir(directory)) {
    std::string_view name = entry->d_name;
    if (!name.starts_with(mine)) continue;
    std::string_view rest = name.substr(mine.size());
    pid_t pid = 0;
    size_t digits = 0;
    for (; digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9'; ++digits) {
      pid = pid * 10 + (rest[digits] - '0');
    }
    if (digits == 0 || digits == rest.size() || rest[digits] != '.') continue;
    if (!creators.empty() && std::find(creators.begin(), creators.end(), pid) == creators.end()) continue;
    if (!processExited(pid)) continue;
    if (shm_unlink(fmt::format("/{}", name).c_str()) == 0) {
      log::info("shm: removed {} left behind by pid {}, which exited before unlinking it", name, pid);
    }
  }
  closedir(directory);
}

namespace {

constexpr uintptr_t kPageBytes = 4096;

// Calls `visit` with `begin` and with every page boundary after it, up to `begin + bytes`.
template <typename Visit>
void forEachPage(char* begin, size_t bytes, Visit visit) {
  char* const end = begin + bytes;
  for (char* at = begin; at < end;
       at = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(at) | (kPageBytes - 1)) + 1)) {
    visit(at);
  }
}

}  // namespace

void touchForRead(const void* begin, size_t bytes) {
  forEachPage(static_cast<char*>(const_cast<void*>(begin)), bytes,
              [](char* at) { static_cast<void>(*static_cast<volatile char*>(at)); });
}

void touchForWrite(void* begin, size_t bytes) {
  forEachPage(static_cast<char*>(begin), bytes, [](char* at) { *static_cast<volatile char*>(at) = 0; });
}

}  // namespace comm
