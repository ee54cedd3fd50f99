#include "job_topology.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/launch_environment.h"
#include "comm.h"
#include "common/host_name.h"
#include "topo/topology.h"

namespace {

// What each rank tells rank 0: its node id, host, pid, NUMA domain and
// socket, then its node's hardware (topo::describe), in one fixed-size record.
constexpr size_t kRecordBytes = 8192;

int worldSizeFromLauncher() {
  try {
    auto lookup = [](std::string_view name) -> std::optional<std::string> {
      const char* value = std::getenv(std::string(name).c_str());
      return value == nullptr ? std::nullopt : std::optional<std::string>(value);
    };
    return comm::bootstrap::detectLaunch(lookup).worldSize;
  } catch (const std::exception&) {
    return 1;  // comm_init will say what is wrong, if it is asked
  }
}

std::string known(int index) { return index < 0 ? "unknown" : std::to_string(index); }

// Indents every line of `text` by two spaces.
std::string indented(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "  " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

int failed(const char* call) {
  fmt::print(stderr, "comm-info: {}: {}\n", call, comm_last_error());
  return 1;
}

int printJobTopology() {
  comm_t* world = nullptr;
  if (comm_init(&world, nullptr) != COMM_OK) return failed("comm_init");
  int rank = 0, size = 0, node = 0, nodes = 0;
  comm_rank(&rank, world);
  comm_size(&size, world);
  comm_node_id(&node, world);
  comm_node_count(&nodes, world);
  const comm::topo::Placement placement = comm::topo::placeOfThisProcess();
  std::string mine = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", node, comm::hostName(), getpid(), placement.numa,
                                 placement.socket, comm::topo::describe(comm::topo::discover()));
  mine.resize(kRecordBytes);  // cut (a node with very many devices) or padded with NULs
  mine.back() = '\0';
  std::vector<char> all(kRecordBytes * static_cast<size_t>(size));
  comm_tensor_t *in = nullptr, *out = nullptr;
  int64_t mineShape[1] = {static_cast<int64_t>(kRecordBytes)};
  int64_t allShape[1] = {static_cast<int64_t>(all.size())};
  comm_tensor_create(&in, mine.data(), COMM_UINT8, 1, mineShape);
  comm_tensor_create(&out, all.data(), COMM_UINT8, 1, allShape);
  comm_status_t status = comm_all_gather(world, in, out, nullptr);
  comm_tensor_destroy(in);
  comm_tensor_destroy(out);
  if (status != COMM_OK) {
    failed("comm_all_gather");
    comm_destroy(world);
    return 1;
  }
  if (rank == 0) {
    fmt::print("Topology of this job: {} ranks on {} nodes\n", size, nodes);
    for (int n = 0; n < nodes; ++n) {
      bool first = true;
      for (int r = 0; r < size; ++r) {
        std::vector<std::string> fields;
        const char* record = all.data() + kRecordBytes * static_cast<size_t>(r);
        std::string text(record, strnlen(record, kRecordBytes));
        size_t start = 0;
        for (int f = 0; f < 5; ++f) {
          size_t end = text.find('\n', start);
          fields.push_back(text.substr(start, end - start));
          start = end == std::string::npos ? text.size() : end + 1;
        }
        if (std::stoi(fields[0]) != n) continue;
        if (first) fmt::print("node {} on {}:\n{}", n, fields[1], indented(text.substr(start)));
        first = false;
        fmt::print("  rank {} (pid {}): NUMA domain {}, socket {}\n", r, fields[2], known(std::stoi(fields[3])),
                   known(std::stoi(fields[4])));
      }
    }
  }
  comm_destroy(world);
  return 0;
}

}  // namespace

int printTopology() {
  try {
    if (worldSizeFromLauncher() > 1) return printJobTopology();
    const comm::topo::Placement placement = comm::topo::placeOfThisProcess();
    fmt::print("Topology of this node:\n{}This process: NUMA domain {}, socket {}\n",
               comm::topo::describe(comm::topo::discover()), known(placement.numa), known(placement.socket));
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "comm-info: {}\n", error.what());
    return 1;
  }
}
