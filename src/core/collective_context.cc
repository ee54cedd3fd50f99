#include "core/collective_context.h"

#include "core/communicator.h"
#include "core/error.h"
#include "core/dtype.h"
#include "core/tags.h"

namespace comm::core {
namespace {

constexpr const char* kNames[] = {"?",          "barrier",          "all_reduce",        "reduce",
                                  "broadcast",  "all_gather",       "reduce_scatter",    "gather",
                                  "scatter",    "all_to_all_single", "all_to_all",       "all_gather_v",
                                  "reduce_scatter_v", "gather_v",   "scatter_v"};

// A collective slower than this starts listening for failure notices.
constexpr auto kNoticeDelay = std::chrono::milliseconds(100);
constexpr uint32_t kSignatureStep = 0;
constexpr uint32_t kNoticeStep = 1;

}  // namespace

const char* collectiveName(CollectiveKind kind) {
  auto index = static_cast<size_t>(kind);
  return index < std::size(kNames) ? kNames[index] : "?";
}

std::string describe(const Signature& s) {
  std::string text = collectiveName(static_cast<CollectiveKind>(s.kind));
  if (s.dtype >= 0) text += fmt::format(" {}", dtypeName(static_cast<comm_dtype_t>(s.dtype)));
  if (s.count >= 0) text += fmt::format(" x {}", s.count);
  if (s.op >= 0) text += fmt::format(" {}", opName(static_cast<comm_op_t>(s.op)));
  if (s.root >= 0) text += fmt::format(" root {}", s.root);
  if (s.extra != 0) text += fmt::format(" (layout {:x})", s.extra);
  return text;
}

CollectiveContext::CollectiveContext(Communicator& comm, uint32_t sequence, const Signature& signature)
    : comm_(comm),
      sequence_(sequence),
      signature_(signature),
      rank_(comm.rank()),
      size_(comm.size()),
      requests_(comm.collectiveBuffers().requests),
      pending_(comm.collectiveBuffers().pending) {
  if (size_ == 1) return;
  uint64_t tag = tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kSignatureStep);
  int right = (rank_ + 1) % size_;
  int left = (rank_ + size_ - 1) % size_;
  transport::Request& out = requests_.emplace_back();
  comm_.send(right, tag, &signature_, sizeof(signature_), out);
  pending_.push_back({&out, right, false});
  transport::Request& in = requests_.emplace_back();
  comm_.recv(left, tag, &leftSignature_, sizeof(leftSignature_), in);
  pending_.push_back({&in, left, true});
  signatureRecv_ = &in;
  signatureChecked_ = false;
}

CollectiveContext::~CollectiveContext() {
  withdrawNoticeReceives();
  if (!pending_.empty()) comm_.abandon(std::move(requests_), pending_);
  // Capacity stays for the next collective.
  pending_.clear();
  requests_.clear();
}

char* CollectiveContext::staging() {
  std::unique_ptr<char[]>& area = comm_.collectiveBuffers().staging;
  if (!area) area = std::make_unique_for_overwrite<char[]>(kStagingBytes);
  return area.get();
}

char* CollectiveContext::scratch(size_t bytes, std::unique_ptr<char[]>& owner) {
  if (bytes <= kStagingBytes) return staging();
  owner = std::make_unique_for_overwrite<char[]>(bytes);
  return owner.get();
}

RequestId CollectiveContext::post(bool isRecv, int peer, uint32_t step, void* data, size_t size) {
  transport::Request& request = requests_.emplace_back();
  uint64_t tag = tags::make(comm_.id(), tags::Kind::kCollective, sequence_, step);
  try {
    if (isRecv) {
      comm_.recv(peer, tag, data, size, request);
    } else {
      comm_.send(peer, tag, data, size, request);
    }
  } catch (...) {
    requests_.pop_back();
    releaseAll();
    throw;
  }
  pending_.push_back({&request, peer, isRecv});
  return pending_.size() - 1;
}

RequestId CollectiveContext::send(int peer, uint32_t step, const void* data, size_t size) {
  return post(false, peer, step, const_cast<void*>(data), size);
}

RequestId CollectiveContext::recv(int peer, uint32_t step, void* data, size_t size) {
  return post(true, peer, step, data, size);
}

void CollectiveContext::checkSignature() {
  if (signatureChecked_ || !signatureRecv_->done.load(std::memory_order_acquire)) return;
  signatureChecked_ = true;
  if (signatureRecv_->status != COMM_OK) return;  // reported by the wait that awaits it
  if (!(leftSignature_ == signature_)) {
    int left = (rank_ + size_ - 1) % size_;
    notifyPeers(COMM_ERR_MISMATCH, left, leftSignature_);
    fail(COMM_ERR_MISMATCH, "comm_{}: rank {} {} vs rank {} {}", collectiveName(static_cast<CollectiveKind>(signature_.kind)),
         rank_, describe(signature_), left, describe(leftSignature_));
  }
}

void CollectiveContext::waitFor(std::span<const Pending> pending) {
  auto what = [this] {
    return fmt::format("comm_{} (#{} on {})", collectiveName(static_cast<CollectiveKind>(signature_.kind)),
                       sequence_, comm_.name());
  };
  std::function<void()> check = [this] {
    checkSignature();
    watchNotices();
  };
  try {
    try {
      comm_.waitAll(pending, comm_.deadline(), what, &check);
    } catch (const Error& e) {
      // A size or tag confusion usually means the ranks disagree: say so if the signature shows it.
      checkSignature();
      notifyPeers(e.status(), -1, Signature{});
      throw;
    }
    checkSignature();
  } catch (...) {
    releaseAll();
    throw;
  }
}

void CollectiveContext::releaseAll() {
  // Before the exception unwinds the algorithm's scratch buffers, no receive
  // may still point into them.
  withdrawNoticeReceives();
  comm_.abandon(std::move(requests_), pending_);
  pending_.clear();
  requests_.clear();
  signatureChecked_ = true;
}

void CollectiveContext::poll() { comm_.world().transport().progress(); }

void CollectiveContext::wait(RequestId id) {
  if (pending_[id].request->done.load(std::memory_order_acquire) && signatureChecked_) {
    if (pending_[id].request->status == COMM_OK) return;
  }
  // The signature receive rides along with every wait, so a mismatch that
  // leaves the data waiting forever is still seen.
  const Pending both[] = {pending_[id], pending_[1]};
  waitFor(std::span<const Pending>(both, signatureChecked_ ? 1 : 2));
}

void CollectiveContext::waitAll() { waitFor(pending_); }

void CollectiveContext::finish() {
  waitFor(pending_);
  pending_.clear();
  comm_.cancel(noticeReceives_);
  noticeReceives_.clear();
}

void CollectiveContext::withdrawNoticeReceives() {
  pending_.insert(pending_.end(), noticeReceives_.begin(), noticeReceives_.end());
  noticeReceives_.clear();
}

void CollectiveContext::notifyPeers(comm_status_t status, int otherRank, const Signature& other) {
  if (peersNotified_ || size_ == 1) return;
  peersNotified_ = true;
  outgoing_ = {sequence_, status, rank_, otherRank, signature_, other};
  uint64_t tag = tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kNoticeStep);
  try {
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      transport::Request& request = requests_.emplace_back();
      comm_.send(peer, tag, &outgoing_, sizeof(outgoing_), request);
      pending_.push_back({&request, peer, false});
    }
  } catch (const Error&) {
    // The failure being reported matters more than not reaching everyone.
  }
}

void CollectiveContext::postNoticeReceive(int peer) {
  size_t slot = peer < rank_ ? peer : peer - 1;
  transport::Request& request = requests_.emplace_back();
  FailureNotice& notice = incoming_.emplace_back();
  comm_.recv(peer, tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kNoticeStep), &notice, sizeof(notice),
             request);
  noticeReceives_[slot] = {&request, peer, true};
  noticeOf_[slot] = &notice;
}

void CollectiveContext::watchNotices() {
  if (size_ == 1 || peersNotified_) return;
  if (noticeReceives_.empty()) {
    if (Clock::now() - start_ < kNoticeDelay) return;
    noticeReceives_.resize(size_ - 1);
    noticeOf_.resize(size_ - 1);
    for (int peer = 0; peer < size_; ++peer) {
      if (peer != rank_) postNoticeReceive(peer);
    }
    return;
  }
  for (size_t slot = 0; slot < noticeReceives_.size(); ++slot) {
    const transport::Request& request = *noticeReceives_[slot].request;
    if (!request.done.load(std::memory_order_acquire) || request.status != COMM_OK) continue;
    const FailureNotice& notice = *noticeOf_[slot];
    if (notice.sequence != sequence_) {
      // Left over from a failed collective 2^14 sequence numbers ago.
      postNoticeReceive(noticeReceives_[slot].peer);
      continue;
    }
    peersNotified_ = true;  // every rank heard it from the rank that gave up
    const char* name = collectiveName(static_cast<CollectiveKind>(signature_.kind));
    if (notice.status == COMM_ERR_MISMATCH && notice.otherRank >= 0) {
      fail(COMM_ERR_MISMATCH, "comm_{} (#{} on {}): rank {} found rank {} {} vs rank {} {}", name, sequence_,
           comm_.name(), notice.rank, notice.rank, describe(notice.signature), notice.otherRank,
           describe(notice.other));
    }
    fail(notice.status == COMM_ERR_MISMATCH ? COMM_ERR_MISMATCH : COMM_ERR_REMOTE,
         "comm_{} (#{} on {}): rank {} gave up on it ({}) while this rank ran {}", name, sequence_, comm_.name(),
         notice.rank, notice.status, describe(signature_));
  }
}

}  // namespace comm::core
