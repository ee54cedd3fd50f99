#include "core/mismatch_check.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <utility>

#include "common/error.h"
#include "core/communicator.h"
#include "core/tags.h"

namespace comm::core {
namespace {

constexpr uint32_t kSignatureStep = 0;

}  // namespace

SignatureEdges signatureEdges(const NodeLayout& nodes, int rank) {
  const int node = nodes.nodeOf[rank];
  const int localRank = nodes.localRank[rank];
  const std::vector<int>& mates = nodes.members[node];
  SignatureEdges edges;
  if (localRank > 0) {
    edges.from = mates[localRank - 1];
  } else if (node > 0) {
    edges.from = nodes.members[node - 1][0];
  }
  if (localRank + 1 < static_cast<int>(mates.size())) edges.to[0] = mates[localRank + 1];
  if (localRank == 0 && node + 1 < nodes.count()) edges.to[1] = nodes.members[node + 1][0];
  return edges;
}

void failMismatch(const Signature& ours, int rank, int other, const Signature& theirs) {
  fail(COMM_ERR_MISMATCH, "comm_{}: rank {} {} vs rank {} {}", collectiveName(static_cast<CollectiveKind>(ours.kind)),
       rank, describe(ours), other, describe(theirs));
}

void MismatchCheck::start() {
  const SignatureEdges edges = signatureEdges(comm_.nodes(), comm_.rank());
  if (edges.to[0] >= 0) {
    transport::Request& out = requests_.emplace_back();
    send(edges.to[0], out);
    pending_.push_back({&out, edges.to[0], false});
  }
  if (edges.to[1] >= 0) {  // held: see release
    transport::Request& held = requests_.emplace_back();
    held.markDone();  // nothing to wait for until it is sent
    heldTo_ = edges.to[1];
    heldSlot_ = pending_.size();
    pending_.push_back({&held, heldTo_, false});
  }
  if (edges.from >= 0) {  // the tree's root has nothing to compare with
    checked_ = false;
    from_ = edges.from;
    receive();
  }
  slots_ = pending_.size();
}

uint64_t MismatchCheck::tag() const {
  return tags::make(comm_.id(), tags::Kind::kSignature, sequence_, kSignatureStep);
}

void MismatchCheck::send(int to, transport::Request& out) {
  comm_.send(to, tag(), &signature_, sizeof(signature_), out);
}

void MismatchCheck::release() {
  const int to = std::exchange(heldTo_, -1);
  transport::Request& out = *pending_[heldSlot_].request;
  try {
    send(to, out);
  } catch (...) {
    out.markDone();  // never posted: nothing for a wait or a withdrawal to find
    throw;
  }
}

void MismatchCheck::receive() {
  transport::Request& in = requests_.emplace_back();
  comm_.recv(from_, tag(), &theirs_, sizeof(theirs_), in);
  receiveSlot_ = pending_.size();
  pending_.push_back({&in, from_, true});
}

bool MismatchCheck::compare() {
  const transport::Request& received = *pending_[receiveSlot_].request;
  if (!received.done.load(std::memory_order_acquire)) return false;
  checked_ = true;
  if (received.status != COMM_OK) return false;  // reported by the wait that awaits it
  return !(theirs_ == signature_);
}

std::string MismatchCheck::what() const { return describeCall(signature_, sequence_, comm_.name()); }

void MismatchCheck::await() {
  if (checked_) return;
  const transport::Request& posted = *pending_[receiveSlot_].request;
  // The wait that failed withdrew it with the data: ask again (a signature
  // that came meanwhile waits for a receive).
  if (posted.done.load(std::memory_order_acquire) && posted.status != COMM_OK) receive();
  // A rank in this collective sends its signature before anything else,
  // or (across nodes) with its first message to this rank, once it has
  // waited a little, or at its end, so it is due soon; a second covers a
  // busy peer without holding back the report for long when its sender is
  // stuck elsewhere.
  const Deadline soon(std::min(comm_.deadline().remaining(), std::chrono::milliseconds(1000)));
  try {
    comm_.waitAll(std::span<const Pending>(&pending_[receiveSlot_], 1), soon, [this] { return what(); });
  } catch (const Error&) {
    // Nothing to compare: the failure that brought this rank here is the one to report.
  }
}

}  // namespace comm::core
