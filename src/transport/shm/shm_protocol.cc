// The direct shared-memory transport's messages (shm_protocol.h) as they
// move through the rings: what a sender writes, and what a receiver does
// with each kind it reads.
#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "transport/shm/shm_transport_impl.h"

namespace comm::transport {

uint64_t ShmTransport::drain(Peer& peer) {
  // At most one ring's worth per call: a fast sender cannot keep us here.
  for (uint64_t n = 0; n < kMaxSlots; ++n) {
    const ShmSlot* slot = peer.in.peek();
    if (slot == nullptr) return n;
    switch (slot->kind) {
      case ShmKind::kEager:
        if (!onEager(peer, *slot)) return n;
        break;
      case ShmKind::kRequestToSend:
        if (!onRequestToSend(peer, *slot)) return n;
        break;
      case ShmKind::kClearToSend: {
        ShmClearToSend clear;
        std::memcpy(&clear, shmPayload(slot), sizeof clear);
        ShmOp* op = ShmOp::fromToken(slot->tagOrToken);
        op->remoteToken = clear.receiverToken;
        op->state = ShmOpState::kStreaming;
        peer.streaming.pushBack(op);
        break;
      }
      case ShmKind::kChunk: onChunk(peer, *slot); break;
      case ShmKind::kFinish: onFinish(peer, *slot); break;
      default:
        fail(COMM_ERR_INTERNAL, "shm: rank {} wrote a slot of unknown kind {}", peer.rank,
             static_cast<uint32_t>(slot->kind));
    }
    peer.in.release();
  }
  return kMaxSlots;
}

bool ShmTransport::admit(Peer& peer, size_t cost) {
  if (!peer.matching.admits(cost, maxUnexpected_)) {
    if (!peer.heldBack) {
      log::debug(
          "shm: rank {} sent more messages before their receives than this rank holds for one peer ({} bytes); "
          "its ring is left unread until receives take some",
          peer.rank, maxUnexpected_);
      peer.heldBack = true;
    }
    return false;
  }
  peer.heldBack = false;
  return true;
}

bool ShmTransport::onEager(Peer& peer, const ShmSlot& slot) {
  const uint64_t tag = slot.tagOrToken;
  if (ShmOp* op = peer.matching.takeReceive(tag)) {
    receiveWhole(*op->request, "shm", peer.rank, tag, op->buffer, op->size, shmPayload(&slot), slot.size);
    complete(*op->request);
    ops_.release(op);
    return true;
  }
  if (!admit(peer, Matching::cost(slot.size, false))) return false;
  ShmArrival* arrival = arrivals_.acquire();
  arrival->tag = tag;
  arrival->size = slot.size;
  arrival->rendezvous = false;
  arrival->data.assign(shmPayload(&slot), shmPayload(&slot) + slot.size);
  peer.matching.hold(arrival);
  return true;
}

bool ShmTransport::onRequestToSend(Peer& peer, const ShmSlot& slot) {
  ShmRendezvous rendezvous;
  std::memcpy(&rendezvous, shmPayload(&slot), sizeof rendezvous);
  const uint64_t tag = slot.tagOrToken;
  if (ShmOp* op = peer.matching.takeReceive(tag)) {
    match(peer, op, slot.size, rendezvous.senderToken, rendezvous.address);
    return true;
  }
  if (!admit(peer, Matching::cost(slot.size, true))) return false;
  ShmArrival* arrival = arrivals_.acquire();
  arrival->tag = tag;
  arrival->size = slot.size;
  arrival->rendezvous = true;
  arrival->senderToken = rendezvous.senderToken;
  arrival->address = rendezvous.address;
  peer.matching.hold(arrival);
  return true;
}

void ShmTransport::onChunk(Peer& peer, const ShmSlot& slot) {
  ShmOp* op = ShmOp::fromToken(slot.tagOrToken);
  if (op->state == ShmOpState::kReceiving) std::memcpy(op->buffer + op->done, shmPayload(&slot), slot.size);
  op->done += slot.size;
  if (op->done < op->size) return;
  peer.receiving.remove(op);
  if (op->state == ShmOpState::kReceiving) {
    op->request->bytes = op->size;
    complete(*op->request);
  }
  ops_.release(op);
}

void ShmTransport::onFinish(Peer& peer, const ShmSlot& slot) {
  ShmOp* op = ShmOp::fromToken(slot.tagOrToken);
  if (slot.status != COMM_OK) {
    op->request->fail(static_cast<comm_status_t>(slot.status),
                      "shm: rank {} could not read the message with tag {:#x} ({} bytes) from this rank's memory",
                      peer.rank, op->tag, op->size);
  }
  complete(*op->request);
  ops_.release(op);
}

// A receive meets the request-to-send of a `size`-byte message.
void ShmTransport::match(Peer& peer, ShmOp* op, size_t size, uint64_t senderToken, uint64_t address) {
  op->remoteToken = senderToken;
  op->remoteAddress = address;
  if (size != op->size) {
    // The sender's part is over: a receive took its message.
    reply(peer, ShmKind::kFinish, senderToken, 0, COMM_OK);
    failMismatch(*op->request, "shm", peer.rank, op->tag, size, op->size);
    complete(*op->request);
    ops_.release(op);
  } else if (peer.crossMemory && attachLarge_) {
    op->state = ShmOpState::kCopying;
    copies_.pushBack(op);
  } else {
    op->state = ShmOpState::kReceiving;
    peer.receiving.pushBack(op);
    reply(peer, ShmKind::kClearToSend, senderToken, op->token(), COMM_OK);
  }
}

uint64_t ShmTransport::pump(Peer& peer) {
  uint64_t moved = 0;
  while (!peer.replies.empty()) {
    ShmSlot* slot = peer.out.claim();
    if (slot == nullptr) return moved;
    write(peer.out, slot, peer.replies.front());
    peer.replies.pop_front();
    ++moved;
  }
  while (!peer.backlog.empty()) {
    ShmOp* op = peer.backlog.front();
    if (!postSend(peer, op)) return moved;
    ++moved;
  }
  while (!peer.streaming.empty()) {
    ShmSlot* slot = peer.out.claim();
    if (slot == nullptr) return moved;
    ShmOp* op = peer.streaming.front();
    const size_t bytes = std::min(slotPayload_, op->size - op->done);
    slot->kind = ShmKind::kChunk;
    slot->tagOrToken = op->remoteToken;
    slot->size = bytes;
    std::memcpy(shmPayload(slot), op->buffer + op->done, bytes);
    peer.out.publish(slot);
    ++moved;
    op->done += bytes;
    if (op->done == op->size) {
      peer.streaming.remove(op);
      complete(*op->request);
      ops_.release(op);
    }
  }
  return moved;
}

// Puts the first send of the backlog into the ring; false while it is full.
bool ShmTransport::postSend(Peer& peer, ShmOp* op) {
  ShmSlot* slot = peer.out.claim();
  if (slot == nullptr) return false;
  peer.backlog.remove(op);
  slot->tagOrToken = op->tag;
  slot->size = op->size;
  if (op->size <= slotPayload_) {
    slot->kind = ShmKind::kEager;
    if (op->size != 0) std::memcpy(shmPayload(slot), op->buffer, op->size);
    peer.out.publish(slot);
    complete(*op->request);
    ops_.release(op);
    return true;
  }
  slot->kind = ShmKind::kRequestToSend;
  const ShmRendezvous rendezvous{op->token(), reinterpret_cast<uint64_t>(op->buffer)};
  std::memcpy(shmPayload(slot), &rendezvous, sizeof rendezvous);
  op->state = ShmOpState::kAnnounced;
  peer.out.publish(slot);
  return true;
}

void ShmTransport::reply(Peer& peer, ShmKind kind, uint64_t token, uint64_t receiverToken, int32_t status) {
  const Reply message{kind, token, receiverToken, status};
  if (peer.replies.empty()) {
    if (ShmSlot* slot = peer.out.claim()) return write(peer.out, slot, message);
  }
  peer.replies.push_back(message);
}

void ShmTransport::write(ShmProducer& ring, ShmSlot* slot, const Reply& reply) {
  slot->kind = reply.kind;
  slot->tagOrToken = reply.token;
  slot->size = 0;
  slot->status = reply.status;
  const ShmClearToSend clear{reply.receiverToken};
  std::memcpy(shmPayload(slot), &clear, sizeof clear);
  ring.publish(slot);
}

}  // namespace comm::transport
