// A communicator's flight recorder: its last kEntries collectives and user
// sends/receives, with what each is doing (posted, waiting for a peer,
// done, failed). Always on, so it costs a few plain stores per operation
// and no allocation or lock: the entries are fixed rings of atomics that
// the operation's own thread writes and a failure's report reads.
//
// On a timeout or a peer's failure the communicator writes it to the log
// and, with COMM_DEBUG_DIR, to a JSON file per rank (Communicator::
// reportStall); `comm-info --hang-report DIR` merges the files and names
// the rank the others wait for. The JSON fields are what flightJson writes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/signature.h"

namespace comm::core {

class FlightRecorder {
 public:
  // Entries per ring: one ring of collectives, one of user messages.
  static constexpr size_t kEntries = 64;
  // A number that no entry has: an operation that records nothing.
  static constexpr uint64_t kNone = 0;

  enum class State : uint32_t { kPosted = 1, kWaiting = 2, kDone = 3, kFailed = 4 };
  // User messages are recorded as a Signature too: kind one of these, root
  // the peer (-1 for a batch), count the bytes.
  static constexpr uint32_t kSendKind = 100;
  static constexpr uint32_t kRecvKind = 101;
  static constexpr uint32_t kBatchKind = 102;  // a batch of sends and receives

  // Records the start of collective `sequence`; returns the entry's number.
  // Collectives of a communicator run one at a time, in sequence order, so
  // the sequence numbers the entry and no shared counter is touched.
  uint64_t startCollective(uint32_t sequence, const Signature& signature) {
    const uint64_t number = uint64_t{sequence} + 1;
    collectives_.start(number, sequence, signature);
    return number;
  }
  // Records the start of a user message (kind kSendKind, kRecvKind or
  // kBatchKind) of `bytes` to or from `peer` (-1: several). Threads may
  // post them at once.
  uint64_t startMessage(uint32_t kind, int peer, int64_t bytes) {
    const uint64_t count = messageCount_.fetch_add(1, std::memory_order_relaxed);
    const uint64_t number = (count + 1) | kMessageBit;
    Signature signature;
    signature.kind = static_cast<uint16_t>(kind);
    signature.root = peer;
    signature.count = bytes;
    messages_.start(number, static_cast<uint32_t>(count), signature);
    return number;
  }
  // The operation of entry `number` waits for `peer` (a rank of the communicator).
  void waiting(uint64_t number, int peer) {
    if (number != kNone) ring(number).waiting(number, peer);
  }
  void finish(uint64_t number, bool ok) {
    if (number != kNone) ring(number).setState(number, ok ? State::kDone : State::kFailed);
  }

  // One entry as read at the time of a report.
  struct Snapshot {
    uint32_t sequence;  // the collective's sequence number, or the user message's count on this communicator
    Signature signature;
    int32_t waitingFor;  // -1: not known
    State state;
  };
  // The entries recorded so far: collectives oldest first, then user
  // messages oldest first (at most kEntries of each).
  std::vector<Snapshot> snapshot() const;

 private:
  static constexpr uint64_t kMessageBit = uint64_t{1} << 63;
  static constexpr size_t kSignatureWords = sizeof(Signature) / sizeof(uint64_t);

  struct Entry {
    std::atomic<uint64_t> number{kNone};
    std::atomic<uint64_t> signature[kSignatureWords]{};  // the Signature's bytes
    std::atomic<uint64_t> sequenceState{0};              // sequence << 32 | state
    std::atomic<int32_t> waitingFor{-1};
  };

  class Ring {
   public:
    // A handful of plain stores: this runs for every operation.
    void start(uint64_t number, uint32_t sequence, const Signature& signature) {
      Entry& entry = entries_[number % kEntries];
      uint64_t words[kSignatureWords];
      std::memcpy(words, &signature, sizeof words);
      // Unreadable while it changes, so a report never mixes two operations.
      entry.number.store(kNone, std::memory_order_relaxed);
      for (size_t i = 0; i < kSignatureWords; ++i) entry.signature[i].store(words[i], std::memory_order_relaxed);
      entry.sequenceState.store(pack(sequence, State::kPosted), std::memory_order_relaxed);
      entry.waitingFor.store(-1, std::memory_order_relaxed);
      entry.number.store(number, std::memory_order_release);
    }
    void waiting(uint64_t number, int32_t peer) {
      if (Entry* entry = find(number)) {
        entry->waitingFor.store(peer, std::memory_order_relaxed);
        entry->sequenceState.store(pack(sequenceOf(number), State::kWaiting), std::memory_order_relaxed);
      }
    }
    void setState(uint64_t number, State state) {
      if (Entry* entry = find(number))
        entry->sequenceState.store(pack(sequenceOf(number), state), std::memory_order_relaxed);
    }
    void read(std::vector<Snapshot>& into) const;

   private:
    static uint32_t sequenceOf(uint64_t number) { return static_cast<uint32_t>((number & ~kMessageBit) - 1); }
    static uint64_t pack(uint32_t sequence, State state) {
      return uint64_t{sequence} << 32 | static_cast<uint32_t>(state);
    }
    Entry* find(uint64_t number) {
      Entry& entry = entries_[number % kEntries];
      // kEntries later operations may have taken the entry over already.
      return entry.number.load(std::memory_order_relaxed) == number ? &entry : nullptr;
    }

    std::array<Entry, kEntries> entries_;
  };

  Ring& ring(uint64_t number) { return (number & kMessageBit) != 0 ? messages_ : collectives_; }

  Ring collectives_;
  Ring messages_;
  std::atomic<uint64_t> messageCount_{0};
};

// "all_reduce", "send"...: the kind of a recorded entry.
const char* flightKindName(uint32_t kind);
const char* flightStateName(FlightRecorder::State state);
bool isCollective(const FlightRecorder::Snapshot& entry);
// "collective #5 all_reduce float64 x 1 sum: waiting for rank 2", for logs.
std::string describeFlightEntry(const FlightRecorder::Snapshot& entry);

// Who wrote a report and why.
struct FlightReportHeader {
  std::string communicator;  // its name
  int id;
  int rank;  // in the communicator
  int size;
  int worldRank;
  std::vector<int> worldRanks;  // of every member, by rank
  std::string host;
  int pid;
  std::string reason;  // the error that made the rank write it
};
// The report as the JSON file comm-info --hang-report reads.
std::string flightJson(const FlightReportHeader& header, const std::vector<FlightRecorder::Snapshot>& entries);

}  // namespace comm::core
