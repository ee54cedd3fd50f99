#include "core/flight_recorder.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/dtype.h"

namespace comm::core {

void FlightRecorder::Ring::read(std::vector<Snapshot>& into) const {
  std::vector<std::pair<uint64_t, Snapshot>> read;
  for (const Entry& entry : entries_) {
    const uint64_t number = entry.number.load(std::memory_order_acquire);
    if (number == kNone) continue;
    uint64_t words[kSignatureWords];
    for (size_t i = 0; i < kSignatureWords; ++i) words[i] = entry.signature[i].load(std::memory_order_relaxed);
    const uint64_t sequenceState = entry.sequenceState.load(std::memory_order_relaxed);
    const int32_t waitingFor = entry.waitingFor.load(std::memory_order_relaxed);
    // Taken over while it was read: the newer operation is not whole here.
    if (entry.number.load(std::memory_order_acquire) != number) continue;
    Snapshot snapshot{
        static_cast<uint32_t>(sequenceState >> 32), {}, waitingFor, static_cast<State>(sequenceState & 0xffffffff)};
    std::memcpy(&snapshot.signature, words, sizeof words);
    read.emplace_back(number, snapshot);
  }
  std::sort(read.begin(), read.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [number, snapshot] : read) into.push_back(snapshot);
}

std::vector<FlightRecorder::Snapshot> FlightRecorder::snapshot() const {
  std::vector<Snapshot> snapshots;
  collectives_.read(snapshots);
  messages_.read(snapshots);
  return snapshots;
}

const char* flightKindName(uint32_t kind) {
  switch (kind) {
    case FlightRecorder::kSendKind: return "send";
    case FlightRecorder::kRecvKind: return "recv";
    case FlightRecorder::kBatchKind: return "batch";
    default: return collectiveName(static_cast<CollectiveKind>(kind));
  }
}

const char* flightStateName(FlightRecorder::State state) {
  switch (state) {
    case FlightRecorder::State::kPosted: return "posted";
    case FlightRecorder::State::kWaiting: return "waiting";
    case FlightRecorder::State::kDone: return "done";
    case FlightRecorder::State::kFailed: return "failed";
  }
  return "unknown";
}

bool isCollective(const FlightRecorder::Snapshot& s) { return s.signature.kind < FlightRecorder::kSendKind; }

std::string describeFlightEntry(const FlightRecorder::Snapshot& s) {
  std::string text;
  if (isCollective(s)) {
    text = fmt::format("collective #{} {}", s.sequence, describe(s.signature));
  } else {
    text = fmt::format("{} #{} of {} bytes", flightKindName(s.signature.kind), s.sequence, s.signature.count);
    if (s.signature.root >= 0) {
      text +=
          fmt::format(" {} rank {}", s.signature.kind == FlightRecorder::kRecvKind ? "from" : "to", s.signature.root);
    }
  }
  text += fmt::format(": {}", flightStateName(s.state));
  if (s.state != FlightRecorder::State::kDone && s.waitingFor >= 0) text += fmt::format(" for rank {}", s.waitingFor);
  return text;
}

std::string flightJson(const FlightReportHeader& header, const std::vector<FlightRecorder::Snapshot>& entries) {
  nlohmann::json ops = nlohmann::json::array();
  for (const FlightRecorder::Snapshot& s : entries) {
    nlohmann::json op = {
        {"kind", flightKindName(s.signature.kind)}, {"collective", isCollective(s)}, {"sequence", s.sequence},
        {"state", flightStateName(s.state)},        {"waiting_for", s.waitingFor},   {"what", describeFlightEntry(s)}};
    if (isCollective(s)) {
      const auto dtype = static_cast<comm_dtype_t>(s.signature.dtype);
      op["dtype"] = dtypeName(dtype);
      op["count"] = s.signature.count;
      op["bytes"] = s.signature.count * static_cast<int64_t>(dtypeSize(dtype));
    } else {
      op["peer"] = s.signature.root;
      op["bytes"] = s.signature.count;
    }
    ops.push_back(std::move(op));
  }
  nlohmann::json report = {{"communicator", header.communicator},
                           {"id", header.id},
                           {"rank", header.rank},
                           {"size", header.size},
                           {"world_rank", header.worldRank},
                           {"world_ranks", header.worldRanks},
                           {"host", header.host},
                           {"pid", header.pid},
                           {"reason", header.reason},
                           {"ops", std::move(ops)}};
  return report.dump(1) + "\n";
}

}  // namespace comm::core
