#include "core/grow_seats.h"

#include <cstdio>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/growing_nap.h"
#include "core/world.h"

namespace comm::core {
namespace {

// Job-wide keys (World::jobStore*): tickets drawn by newcomers, tickets
// taken by grows, each ticket's arrival (its launch slot) and seat.
constexpr const char* kArrivals = "grow/arrivals";
constexpr const char* kTaken = "grow/taken";
constexpr const char* kEpochs = "grow/epochs";
std::string arrivalKey(int64_t ticket) { return fmt::format("grow/arrival/{}", ticket); }
std::string seatKey(int64_t ticket) { return fmt::format("grow/seat/{}", ticket); }
std::string occupantsKey(int epoch) { return grownWorldPrefix(epoch) + "occupants"; }
std::string settledKey(int epoch) { return grownWorldPrefix(epoch) + "settled"; }
constexpr std::string_view kMade = "made";

// One line per occupant: "SLOT PID HOST NODE" (neither has a blank).
std::string format(const Occupant& occupant) {
  return fmt::format("{} {} {} {}\n", occupant.launchSlot, occupant.pid, occupant.host, occupant.node);
}

Occupant parseOccupant(std::istream& in, const std::string& text) {
  Occupant occupant;
  if (!(in >> occupant.launchSlot >> occupant.pid >> occupant.host >> occupant.node)) {
    fail(COMM_ERR_BOOTSTRAP, "malformed newcomer record '{}' in the store", text);
  }
  return occupant;
}

// What a seat says when its grow gave up: the newcomer fails with the why.
constexpr std::string_view kNoSeat = "none: ";

// Waits for job-wide `key` until `deadline`, polling the store (others
// may use it meanwhile); nullopt when it did not come.
std::optional<std::string> awaitKey(World& world, const std::string& key, Deadline deadline) {
  GrowingNap nap;
  for (;;) {
    if (std::optional<std::string> value = world.jobStoreCheck(key)) return value;
    if (deadline.expired()) return std::nullopt;
    nap.take();
  }
}

// A newcomer's wait for job-wide `key`: in the store (a newcomer may wait
// long for a grow, and must not keep a core busy meanwhile); nullopt at
// its comm_init's deadline.
std::optional<std::string> awaitKeyIdly(World& world, const std::string& key) {
  try {
    return world.jobStoreGet(key);
  } catch (const Error& error) {
    if (error.status() == COMM_ERR_TIMEOUT) return std::nullopt;
    throw;
  }
}

}  // namespace

std::string grownWorldPrefix(int epoch) { return fmt::format("grow{}/", epoch); }

Seat awaitSeat(World& world, const Occupant& self) {
  const int64_t ticket = world.jobStoreAdd(kArrivals, 1) - 1;
  world.jobStoreSet(arrivalKey(ticket), format(self));
  const std::optional<std::string> text = awaitKeyIdly(world, seatKey(ticket));
  if (!text) {
    fail(COMM_ERR_TIMEOUT,
         "no communicator of the job grew for this rank (newcomer {}) within {} ms: its ranks call comm_grow to "
         "take newcomers in",
         ticket, world.timeout().count());
  }
  if (text->starts_with(kNoSeat)) fail(COMM_ERR_REMOTE, "the grow that was to take this rank in failed: {}", *text);
  Seat seat;
  if (std::sscanf(text->c_str(), "%d %d", &seat.epoch, &seat.rank) != 2) {
    fail(COMM_ERR_BOOTSTRAP, "malformed seat '{}' in the store", *text);
  }
  seat.occupants = grownWorldOccupants(world, seat.epoch);
  if (seat.rank < 0 || seat.rank >= static_cast<int>(seat.occupants.size())) {
    fail(COMM_ERR_BOOTSTRAP, "seat '{}' is outside its grown world of {} ranks", *text, seat.occupants.size());
  }
  return seat;
}

int seatNewcomers(World& world, const std::vector<Occupant>& members, int count, std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  const int epoch = static_cast<int>(world.jobStoreAdd(kEpochs, 1));
  const int64_t first = world.jobStoreAdd(kTaken, count) - count;
  std::string occupants;
  for (const Occupant& member : members) occupants += format(member);
  for (int i = 0; i < count; ++i) {
    const std::optional<std::string> arrival = awaitKey(world, arrivalKey(first + i), deadline);
    if (!arrival) {
      const std::string why = fmt::format(
          "only {} of the {} newcomers arrived within {} ms (a newcomer is a rank started with "
          "COMM_JOIN=1, or by commrun --replace)",
          i, count, timeout.count());
      for (int j = 0; j < count; ++j) world.jobStoreSet(seatKey(first + j), fmt::format("{}{}", kNoSeat, why));
      fail(COMM_ERR_TIMEOUT, "{}", why);
    }
    std::istringstream in(*arrival);
    occupants += format(parseOccupant(in, *arrival));
  }
  world.jobStoreSet(occupantsKey(epoch), occupants);
  for (int i = 0; i < count; ++i) {
    world.jobStoreSet(seatKey(first + i), fmt::format("{} {}", epoch, members.size() + i));
  }
  return epoch;
}

std::vector<Occupant> grownWorldOccupants(World& world, int epoch) {
  const std::optional<std::string> text = world.jobStoreCheck(occupantsKey(epoch));
  if (!text) fail(COMM_ERR_BOOTSTRAP, "grown world {} has no seats in the store", epoch);
  std::istringstream in(*text);
  std::vector<Occupant> occupants;
  while (!(in >> std::ws).eof()) occupants.push_back(parseOccupant(in, *text));
  return occupants;
}

void settleGrownWorld(World& world, int epoch, const std::string& failure) {
  world.jobStoreSet(settledKey(epoch), failure.empty() ? std::string(kMade) : failure);
}

void awaitGrownWorldSettled(World& world, int epoch) {
  const std::optional<std::string> word = awaitKeyIdly(world, settledKey(epoch));
  if (!word) {
    fail(COMM_ERR_TIMEOUT, "the ranks that grew the communicator did not say within {} ms whether they all made it",
         world.timeout().count());
  }
  if (*word != kMade) fail(COMM_ERR_REMOTE, "the grow that took this rank in failed: {}", *word);
}

}  // namespace comm::core
