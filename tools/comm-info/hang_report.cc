#include "hang_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

// One rank's record of one communicator.
struct Record {
  json report;
  // The last collective it started (-1: none) and what became of it.
  int64_t lastCollective = -1;
  std::string lastCollectiveState;
  // The operations it had not finished, oldest first.
  std::vector<json> open;
};

Record summarize(json report) {
  Record record;
  for (const json& op : report.at("ops")) {
    const bool collective = op.at("collective").get<bool>();
    if (collective && op.at("sequence").get<int64_t>() >= record.lastCollective) {
      record.lastCollective = op.at("sequence").get<int64_t>();
      record.lastCollectiveState = op.at("state").get<std::string>();
    }
    if (op.at("state") != "done") record.open.push_back(op);
  }
  record.report = std::move(report);
  return record;
}

std::string who(const json& report) {
  return fmt::format("rank {} (world rank {}, pid {} on {})", report.at("rank").get<int>(),
                     report.at("world_rank").get<int>(), report.at("pid").get<int>(),
                     report.at("host").get<std::string>());
}

std::string rankList(const std::set<int>& ranks) {
  std::string text;
  for (int r : ranks) text += fmt::format("{}{}", text.empty() ? "" : ", ", r);
  return text;
}

// Prints one communicator's records and who holds the others up.
void reportCommunicator(const std::string& name, const std::map<int, Record>& records) {
  const json& any = records.begin()->second.report;
  const int size = any.at("size").get<int>();
  const std::vector<int> worldRanks = any.at("world_ranks").get<std::vector<int>>();
  fmt::print("communicator '{}' ({} ranks), records from {} of them:\n", name, size, records.size());
  int64_t furthest = -1;
  for (const auto& [rank, record] : records) {
    furthest = std::max(furthest, record.lastCollective);
    fmt::print("  {}\n    after: {}\n", who(record.report), record.report.at("reason").get<std::string>());
    if (record.open.empty()) fmt::print("    nothing unfinished\n");
    for (const json& op : record.open) fmt::print("    {}\n", op.at("what").get<std::string>());
  }
  std::set<int> silent;
  for (int r = 0; r < size; ++r) {
    if (!records.contains(r)) silent.insert(r);
  }
  if (!silent.empty()) {
    fmt::print("  no record from rank(s) {}: they died, hang, or never failed\n", rankList(silent));
  }

  // Who waits for whom: each rank counts once per rank it waits for.
  std::map<int, std::set<int>> waitedBy;
  for (const auto& [rank, record] : records) {
    for (const json& op : record.open) {
      const int peer = op.at("waiting_for").get<int>();
      if (peer >= 0 && peer != rank) waitedBy[peer].insert(rank);
    }
  }
  // Ranks behind in the collective sequence: the others started one they have not.
  std::set<int> behind = silent;
  for (const auto& [rank, record] : records) {
    if (record.lastCollective < furthest) {
      behind.insert(rank);
      fmt::print("  rank {} has not started collective #{} (its last is #{}, {})\n", rank, furthest,
                 record.lastCollective, record.lastCollectiveState.empty() ? "none" : record.lastCollectiveState);
    }
  }
  for (const auto& [peer, waiters] : waitedBy) {
    fmt::print("  rank(s) {} wait for rank {}\n", rankList(waiters), peer);
  }

  // The culprit: a rank that has not started the collective the others are
  // in (or wrote nothing), else the rank most others wait for. Waits alone
  // can mislead: in a ring each rank waits for its neighbour, not for the
  // rank that stopped the ring.
  auto votes = [&](int rank) {
    auto it = waitedBy.find(rank);
    return it == waitedBy.end() ? size_t{0} : it->second.size();
  };
  int culprit = -1;
  if (!behind.empty()) {
    culprit = *std::max_element(behind.begin(), behind.end(), [&](int a, int b) { return votes(a) < votes(b); });
  } else if (!waitedBy.empty()) {
    culprit = std::max_element(waitedBy.begin(), waitedBy.end(), [](const auto& a, const auto& b) {
                return a.second.size() < b.second.size();
              })->first;
  }
  if (culprit < 0) {
    fmt::print("  => no rank is waited for: the records show no hang\n\n");
    return;
  }
  const int worldRank = culprit < static_cast<int>(worldRanks.size()) ? worldRanks[culprit] : -1;
  if (auto it = records.find(culprit); it != records.end()) {
    fmt::print("  => the others wait for {}\n\n", who(it->second.report));
  } else {
    fmt::print("  => the others wait for rank {} (world rank {}), which wrote no record\n\n", culprit, worldRank);
  }
}

}  // namespace

int printHangReport(const std::string& dir) {
  std::map<std::string, std::map<int, Record>> communicators;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with("flight.") || !file.ends_with(".json")) continue;
    try {
      std::ifstream in(entry.path());
      json report = json::parse(in);
      const std::string name = report.at("communicator").get<std::string>();
      const int rank = report.at("rank").get<int>();
      communicators[name][rank] = summarize(std::move(report));
    } catch (const std::exception& e) {
      fmt::print(stderr, "comm-info: {}: not a flight record: {}\n", entry.path().string(), e.what());
      return 1;
    }
  }
  if (error) {
    fmt::print(stderr, "comm-info: cannot read {}: {}\n", dir, error.message());
    return 1;
  }
  if (communicators.empty()) {
    fmt::print(stderr, "comm-info: no flight record (flight.*.json) in {}\n", dir);
    return 1;
  }
  for (const auto& [name, records] : communicators) reportCommunicator(name, records);
  return 0;
}
