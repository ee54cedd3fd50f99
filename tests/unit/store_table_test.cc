// The store's table (bootstrap/store_table.h) without a server or sockets:
// answers, gets and waits parked until their keys exist, the limits on
// bytes held and on parked waits, and what a client that leaves frees. The
// server around it, over real connections, is checked by store_test.cc.
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/store_table.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using comm::bootstrap::FrameReader;
using comm::bootstrap::kFrameHeaderBytes;
using comm::bootstrap::StoreLimits;
using comm::bootstrap::StoreOp;
using comm::bootstrap::StoreReplies;
using comm::bootstrap::StoreRequest;
using comm::bootstrap::StoreStatus;
using comm::bootstrap::StoreTable;

// One answer, decoded: to whom, for which request, its status and the rest of its body.
struct Answer {
  int client;
  uint64_t id;
  StoreStatus status;
  std::string rest;
  bool refused = false;
};

class Recorder final : public StoreReplies {
 public:
  void reply(int client, std::string frame) override {
    FrameReader reader(std::string_view(frame).substr(kFrameHeaderBytes));
    const uint64_t id = reader.u64();
    const auto status = static_cast<StoreStatus>(reader.u8());
    answers.push_back({client, id, status, frame.substr(kFrameHeaderBytes + 9)});
  }
  void refuse(int client, uint64_t id, const std::string& why) override {
    answers.push_back({client, id, StoreStatus::kError, why, true});
  }
  // The answers since the last call.
  std::vector<Answer> take() { return std::exchange(answers, {}); }

  std::vector<Answer> answers;
};

StoreRequest request(StoreOp op, uint64_t id, std::vector<std::string> keys, std::string value = {}) {
  return {.op = op, .id = id, .keys = std::move(keys), .value = std::move(value)};
}

std::string valueOf(const Answer& answer) { return FrameReader(answer.rest).bytes(); }

void aSetKeyIsGotAtOnce(void**) {
  Recorder replies;
  StoreTable table(StoreLimits{}, replies);
  table.handle(1, request(StoreOp::kSet, 7, {"a"}, "hello"));
  table.handle(2, request(StoreOp::kGet, 8, {"a"}));
  std::vector<Answer> answers = replies.take();
  assert_int_equal(answers.size(), 2);
  assert_int_equal(answers[0].client, 1);
  assert_int_equal(answers[0].id, 7);
  assert_true(answers[0].status == StoreStatus::kOk);
  assert_int_equal(answers[1].client, 2);
  assert_string_equal(valueOf(answers[1]).c_str(), "hello");
  assert_int_equal(table.bytesHeld(), 1 + 5);
}

// A get parks until its key is set; a wait until the last of its keys is.
void getsAndWaitsParkUntilTheirKeysExist(void**) {
  Recorder replies;
  StoreTable table(StoreLimits{}, replies);
  table.handle(1, request(StoreOp::kGet, 1, {"x"}));
  table.handle(2, request(StoreOp::kWait, 2, {"x", "y", "x"}));
  assert_true(replies.take().empty());
  assert_int_equal(table.parkedWaits(), 2);
  assert_int_equal(table.parkedKeys(), 3);
  table.handle(3, request(StoreOp::kSet, 3, {"x"}, "1"));
  std::vector<Answer> answers = replies.take();
  assert_int_equal(answers.size(), 2);  // the set's, then the get's
  assert_int_equal(answers[1].client, 1);
  assert_string_equal(valueOf(answers[1]).c_str(), "1");
  assert_int_equal(table.parkedWaits(), 1);
  table.handle(3, request(StoreOp::kSet, 4, {"y"}, "2"));
  answers = replies.take();
  assert_int_equal(answers.size(), 2);
  assert_int_equal(answers[1].client, 2);
  assert_int_equal(answers[1].id, 2);
  assert_int_equal(table.parkedWaits(), 0);
  assert_int_equal(table.parkedKeys(), 0);
}

void parkedWaitsAreBoundedPerClientAndFreedWhenItLeaves(void**) {
  Recorder replies;
  StoreLimits limits;
  limits.maxParkedPerClient = 2;
  StoreTable table(limits, replies);
  table.handle(1, request(StoreOp::kGet, 1, {"a"}));
  table.handle(1, request(StoreOp::kWait, 2, {"b", "c"}));
  table.handle(2, request(StoreOp::kGet, 3, {"a"}));  // another client's own budget
  assert_true(replies.take().empty());
  table.handle(1, request(StoreOp::kGet, 4, {"d"}));
  std::vector<Answer> answers = replies.take();
  assert_int_equal(answers.size(), 1);
  assert_true(answers[0].refused);
  assert_int_equal(answers[0].id, 4);
  table.dropClient(1);
  assert_int_equal(table.parkedWaits(), 1);
  assert_int_equal(table.parkedKeys(), 1);
  table.handle(3, request(StoreOp::kSet, 5, {"a"}, "v"));
  answers = replies.take();
  assert_int_equal(answers.size(), 2);
  assert_int_equal(answers[1].client, 2);
}

// Holding more than the limit refuses the set; erasing a prefix frees its bytes.
void bytesHeldAreBoundedAndFreedByErasing(void**) {
  Recorder replies;
  StoreLimits limits;
  limits.maxBytesHeld = 16;
  StoreTable table(limits, replies);
  table.handle(1, request(StoreOp::kSet, 1, {"p/a"}, "12345"));
  table.handle(1, request(StoreOp::kSet, 2, {"p/b"}, "12345"));
  assert_int_equal(table.bytesHeld(), 16);
  table.handle(1, request(StoreOp::kSet, 3, {"q"}, "1"));
  std::vector<Answer> answers = replies.take();
  assert_int_equal(answers.size(), 3);
  assert_true(answers[2].refused);
  table.handle(2, request(StoreOp::kErasePrefix, 4, {"p/"}));
  assert_int_equal(table.bytesHeld(), 0);
  table.handle(2, request(StoreOp::kCheck, 5, {"p/a"}));
  answers = replies.take();
  assert_int_equal(answers.size(), 2);
  assert_true(answers[1].status == StoreStatus::kMissing);
}

// add counts from zero, refuses a value that is not an integer and an overflow.
void addCountsAndRefusesWhatIsNoInteger(void**) {
  Recorder replies;
  StoreTable table(StoreLimits{}, replies);
  StoreRequest add = request(StoreOp::kAdd, 1, {"n"});
  add.delta = 5;
  table.handle(1, add);
  add.id = 2;
  add.delta = -7;
  table.handle(1, add);
  table.handle(1, request(StoreOp::kSet, 3, {"s"}, "text"));
  StoreRequest notInteger = request(StoreOp::kAdd, 4, {"s"});
  table.handle(1, notInteger);
  StoreRequest overflow = request(StoreOp::kAdd, 5, {"n"});
  overflow.delta = INT64_MIN;
  table.handle(1, overflow);
  std::vector<Answer> answers = replies.take();
  assert_int_equal(answers.size(), 5);
  assert_int_equal(FrameReader(answers[0].rest).i64(), 5);
  assert_int_equal(FrameReader(answers[1].rest).i64(), -2);
  assert_true(answers[3].status == StoreStatus::kError && !answers[3].refused);
  assert_true(answers[4].status == StoreStatus::kError && !answers[4].refused);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(aSetKeyIsGotAtOnce),
      cmocka_unit_test(getsAndWaitsParkUntilTheirKeysExist),
      cmocka_unit_test(parkedWaitsAreBoundedPerClientAndFreedWhenItLeaves),
      cmocka_unit_test(bytesHeldAreBoundedAndFreedByErasing),
      cmocka_unit_test(addCountsAndRefusesWhatIsNoInteger),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
