// Communicator ids (core/communicator_ids.h) with a handful of ids instead of
// 65535: held ids are never handed out twice, the last member's release
// frees an id and erases its communicator's keys, and running out says so.
#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.h"
#include "common/error.h"
#include "core/communicator_ids.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::core::CommunicatorIds;
using namespace std::chrono_literals;

namespace {

struct MapStore {
  std::map<std::string, int64_t> values;
  CommunicatorIds::Store operations() {
    return {[this](const std::string& key, int64_t delta) { return values[key] += delta; },
            [this](const std::string& prefix) {
              std::erase_if(values, [&](const auto& entry) { return entry.first.starts_with(prefix); });
            }};
  }
};

// The error of an allocation when every id is held, or "" if one was given.
std::string exhausted(CommunicatorIds& ids) {
  try {
    ids.allocate();
  } catch (const comm::Error& error) {
    assert_int_equal(error.status(), COMM_ERR_NO_MEMORY);
    return error.what();
  }
  return "";
}

void heldIdsAreNotHandedOutAndRunningOutSaysSo(void**) {
  MapStore store;
  CommunicatorIds ids(store.operations(), 4);
  std::set<uint16_t> held;
  for (int i = 0; i < 4; ++i) held.insert(ids.allocate());
  assert_true(held == (std::set<uint16_t>{1, 2, 3, 4}));
  assert_string_equal(exhausted(ids).c_str(),
                      "all 4 communicator ids are held by live communicators; destroy some first");
}

void theLastMemberFreesTheIdAndItsKeys(void**) {
  MapStore store;
  CommunicatorIds ids(store.operations(), 4);
  for (int i = 0; i < 4; ++i) ids.allocate();
  store.values["board/2/segment"] = 1;
  store.values["split/2/0/1"] = 1;
  store.values["child/2/group:0,1,/0"] = 1;
  store.values["split/20/0/0"] = 1;
  ids.release(2, 3);
  ids.release(2, 3);
  assert_int_equal(store.values.count("board/2/segment"), 1);
  assert_false(exhausted(ids).empty());
  ids.release(2, 3);
  assert_int_equal(store.values.count("board/2/segment"), 0);
  assert_int_equal(store.values.count("split/2/0/1"), 0);
  assert_int_equal(store.values.count("child/2/group:0,1,/0"), 0);
  assert_int_equal(store.values.count("split/20/0/0"), 1);
  assert_int_equal(ids.allocate(), 2);
  // Its release count started again from nothing.
  ids.release(2, 2);
  assert_false(exhausted(ids).empty());
  ids.release(2, 2);
  assert_int_equal(ids.allocate(), 2);
}

// Threads, each a job's rank with its own store client, allocating and
// releasing 8 ids: no id is ever held by two at once.
void concurrentAllocationsNeverShareAnId(void**) {
  const std::string secret = "communicator ids test secret 0123";
  comm::bootstrap::StoreServer server("127.0.0.1", 0, secret);
  std::atomic<int> holders[9] = {};
  std::atomic<int> clashes{0};
  std::vector<std::thread> ranks;
  for (int t = 0; t < 4; ++t) {
    ranks.emplace_back([&] {
      comm::bootstrap::StoreClient client("127.0.0.1", server.port(), secret, comm::Deadline(120s));
      auto deadline = [] { return comm::Deadline(120s); };
      CommunicatorIds ids({[&](const std::string& key, int64_t delta) { return client.add(key, delta, deadline()); },
                           [&](const std::string& prefix) { client.erasePrefix(prefix, deadline()); }},
                          8);
      for (int i = 0; i < 200; ++i) {
        const uint16_t id = ids.allocate();
        if (holders[id].fetch_add(1) != 0) clashes.fetch_add(1);
        holders[id].fetch_sub(1);
        ids.release(id, 1);
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  assert_int_equal(clashes.load(), 0);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(heldIdsAreNotHandedOutAndRunningOutSaysSo),
      cmocka_unit_test(theLastMemberFreesTheIdAndItsKeys),
      cmocka_unit_test(concurrentAllocationsNeverShareAnId),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
