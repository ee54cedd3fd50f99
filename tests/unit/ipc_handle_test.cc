// CUDA IPC handles as text and their exchange through the rendezvous store
// (cuda/ipc_handle.h), without a GPU: what is encoded decodes to the same
// handle, malformed text is a mismatch naming the peer, and ranks that
// publish through a real store each read every rank's handle.
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "common/error.h"
#include "cuda/ipc_handle.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::Deadline;
using comm::bootstrap::StoreClient;
using comm::bootstrap::StoreServer;
using comm::cuda::IpcHandle;
using namespace std::chrono_literals;

namespace {

const std::string kHost = "127.0.0.1";
const std::string kSecret = "ipc handle test secret 0123456789abcdef";

IpcHandle handleOf(int rank) {
  IpcHandle h;
  for (size_t i = 0; i < IpcHandle::kHandleBytes; ++i) h.handle[i] = static_cast<uint8_t>(i * 7 + rank * 31);
  h.offset = 4096u * static_cast<unsigned>(rank) + 256;
  h.bytes = (uint64_t{1} << 33) + static_cast<uint64_t>(rank);  // past 32 bits
  h.device = rank % 2;
  h.pid = 1000 + rank;
  return h;
}

void handles_survive_text(void**) {
  for (int rank = 0; rank < 4; ++rank) {
    IpcHandle h = handleOf(rank);
    std::string text = comm::cuda::encode(h);
    assert_true(text.rfind("cuda-ipc/1 ", 0) == 0);
    assert_true(comm::cuda::decode(text, "rank 0") == h);
  }
}

void malformed_text_is_a_mismatch_naming_the_peer(void**) {
  const std::string good = comm::cuda::encode(handleOf(1));
  const std::vector<std::string> bad = {
      "",
      "hello",
      "cuda-ipc/2" + good.substr(10),
      good + " extra",
      good.substr(0, good.size() - 2),
      good.substr(0, good.size() - 1) + "G",
      "cuda-ipc/1 -1 5 0 8 " + good.substr(good.size() - 128),
  };
  for (const std::string& text : bad) {
    try {
      comm::cuda::decode(text, "rank 3");
      fail_msg("decoded \"%s\"", text.c_str());
    } catch (const comm::Error& e) {
      assert_int_equal(e.status(), COMM_ERR_MISMATCH);
      assert_non_null(strstr(e.what(), "rank 3"));
    }
  }
}

void ranks_exchange_handles_through_the_store(void**) {
  constexpr int kRanks = 4;
  StoreServer server(kHost, 0, kSecret);
  std::vector<std::future<std::vector<IpcHandle>>> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.push_back(std::async(std::launch::async, [&server, rank] {
      StoreClient client(kHost, server.port(), kSecret, Deadline(120s));
      return comm::cuda::exchangeIpcHandles(client, "cuda-ipc/test", rank, kRanks, handleOf(rank), Deadline(120s));
    }));
  }
  for (auto& rank : ranks) {
    std::vector<IpcHandle> all = rank.get();
    assert_int_equal(all.size(), kRanks);
    for (int r = 0; r < kRanks; ++r) assert_true(all[r] == handleOf(r));
  }
}

void a_missing_rank_times_out_naming_its_key(void**) {
  StoreServer server(kHost, 0, kSecret);
  StoreClient client(kHost, server.port(), kSecret, Deadline(120s));
  try {
    comm::cuda::exchangeIpcHandles(client, "cuda-ipc/alone", 0, 2, handleOf(0), Deadline(300ms));
    fail_msg("expected a timeout");
  } catch (const comm::Error& e) {
    assert_int_equal(e.status(), COMM_ERR_TIMEOUT);
    assert_non_null(strstr(e.what(), "cuda-ipc/alone/1"));
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(handles_survive_text),
      cmocka_unit_test(malformed_text_is_a_mismatch_naming_the_peer),
      cmocka_unit_test(ranks_exchange_handles_through_the_store),
      cmocka_unit_test(a_missing_rank_times_out_naming_its_key),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
