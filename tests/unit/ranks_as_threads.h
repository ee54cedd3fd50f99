// Ranks as threads, in the manner of Gloo's spawnThreads tests: N threads of
// this process each join a world of their own making (core::World's
// createThreadRank, not comm_init, whose one world per process stands),
// over the in-process transport (transport/threads/) with a store on
// loopback that rank 0 hosts, and run a body with their world's
// communicator. Any algorithm runs at 1-16 ranks, with nodes cut by
// test_ranks_per_node, inside one test process, in milliseconds and under
// a debugger.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/unique_fd.h"
#include "core/communicator.h"
#include "core/groups.h"
#include "core/settings.h"
#include "core/world.h"

namespace ranks_as_threads {

struct Layout {
  int ranks = 1;
  int ranksPerNode = 0;  // 0: one node; else nodes of this many ranks (the last may hold fewer)
  // A world's settings beyond those the harness sets ("timeout"...).
  std::map<std::string, std::string> settings;
  comm::core::AlgorithmOverrides overrides{};
};

// A TCP port on loopback that nothing listens on now, for the store.
inline int freePort() {
  comm::UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (!fd.valid() || bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("ranks_as_threads: no free port on loopback");
  }
  return ntohs(address.sin_port);
}

// Runs `body` on `layout.ranks` threads, each with the world communicator of
// the rank it is. Throws, once every thread has ended, naming each rank that
// failed and why; a rank that fails leaves its world, so that the ranks
// waiting for it fail too rather than wait out the timeout.
inline void spawnRanks(const Layout& layout, const std::function<void(comm::core::Communicator&)>& body) {
  const int port = freePort();
  std::mutex mutex;
  std::vector<std::string> failures(layout.ranks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < layout.ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        std::map<std::string, std::string> values = layout.settings;
        values.insert({{"rank", std::to_string(rank)},
                       {"world_size", std::to_string(layout.ranks)},
                       {"master_addr", "127.0.0.1"},
                       {"master_port", std::to_string(port)},
                       {"job_secret", "ranks as threads: one process, one secret"},
                       {"provider", "threads"},
                       {"shm", "0"},
                       {"test_ranks_per_node", std::to_string(layout.ranksPerNode)},
                       {"timeout", "60"}});
        auto world = comm::core::World::createThreadRank(comm::Settings::load(values), layout.overrides);
        std::shared_ptr<comm::core::Communicator> communicator = comm::core::worldCommunicator(world);
        body(*communicator);
      } catch (const std::exception& error) {
        std::lock_guard lock(mutex);
        failures[rank] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::string report;
  for (int rank = 0; rank < layout.ranks; ++rank) {
    if (!failures[rank].empty()) report += fmt::format("rank {} of {}: {}\n", rank, layout.ranks, failures[rank]);
  }
  if (!report.empty()) throw std::runtime_error(report);
}

}  // namespace ranks_as_threads
