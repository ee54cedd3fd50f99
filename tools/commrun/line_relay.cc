#include "line_relay.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace commrun {
namespace {

// A line longer than this is relayed in pieces of this size, each prefixed,
// rather than held in memory without bound.
constexpr size_t kMaxLine = 1 << 20;

}  // namespace

LineRelay::LineRelay(std::string prefix, int outputFd, int logFd)
    : prefix_(std::move(prefix)), outputFd_(outputFd), logFd_(logFd) {}

void LineRelay::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const size_t room = kMaxLine - partial_.size();
    if (newline == std::string_view::npos && bytes.size() < room) {
      partial_.append(bytes);
      break;
    }
    const size_t take = std::min(newline == std::string_view::npos ? room : newline, room);
    const bool lineEnds = take == newline;
    if (partial_.empty()) {
      emit(bytes.substr(0, take));
    } else {
      partial_.append(bytes.substr(0, take));
      emit(partial_);
      partial_.clear();
    }
    bytes.remove_prefix(take + (lineEnds ? 1 : 0));
  }
  flush();
}

void LineRelay::finish() {
  if (!partial_.empty()) {
    emit(partial_);
    partial_.clear();
  }
  flush();
}

void LineRelay::emit(std::string_view line) {
  lastLine_.assign(line);
  outputBatch_.append(prefix_).append(line).push_back('\n');
  if (logFd_ >= 0) logBatch_.append(line).push_back('\n');
}

void LineRelay::flush() {
  if (!outputBatch_.empty()) writeAll(outputFd_, outputBatch_);
  if (!logBatch_.empty()) writeAll(logFd_, logBatch_);
  outputBatch_.clear();
  logBatch_.clear();
}

bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written >= 0) {
      bytes.remove_prefix(written);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd entry{fd, POLLOUT, 0};
      poll(&entry, 1, -1);
    } else if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

}  // namespace commrun
