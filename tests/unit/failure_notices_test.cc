// What a rank reports when a peer's failure notice comes in
// (core/failure_notices.h), and which notices leave it waiting: pure
// functions of the notice, checked here without ranks. The notices among
// real ranks are checked by tests/multiproc and tests/fault.
#include <string>

#include "core/failure_notices.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using comm::core::CollectiveKind;
using comm::core::describeNotice;
using comm::core::FailureNotice;
using comm::core::leavesWaiting;
using comm::core::Signature;

constexpr const char* kCall = "comm_broadcast (#7 on world)";

Signature broadcast(int root) {
  Signature signature;
  signature.kind = static_cast<uint16_t>(CollectiveKind::kBroadcast);
  signature.dtype = COMM_INT8;
  signature.count = 7;
  signature.root = root;
  return signature;
}

FailureNotice notice(comm_status_t status, int rank, int otherRank) {
  FailureNotice notice;
  notice.sequence = 7;
  notice.status = status;
  notice.rank = rank;
  notice.otherRank = otherRank;
  return notice;
}

// A mismatch the notifying rank found names both of its sides, whatever
// this rank runs.
void aMismatchFoundElsewhereNamesBothSides(void**) {
  FailureNotice found = notice(COMM_ERR_MISMATCH, 3, 2);
  found.signature = broadcast(0);
  found.other = broadcast(1);
  assert_string_equal(describeNotice(found, kCall, broadcast(0)).c_str(),
                      "comm_broadcast (#7 on world): rank 3 found rank 3 broadcast int8 x 7 root 0 vs rank 2 "
                      "broadcast int8 x 7 root 1");
}

// A disagreement without a second side (failDisagreement) says the rank gave up.
void aDisagreementWithoutSidesSaysWhoGaveUp(void**) {
  assert_string_equal(
      describeNotice(notice(COMM_ERR_MISMATCH, 1, -1), kCall, broadcast(0)).c_str(),
      "comm_broadcast (#7 on world): rank 1 gave up on it (mismatch between ranks) while this rank ran broadcast "
      "int8 x 7 root 0");
}

// A timeout names the rank the notifying rank waited for, not just the messenger.
void aTimeoutNamesTheRankAwaited(void**) {
  assert_string_equal(describeNotice(notice(COMM_ERR_TIMEOUT, 1, 4), kCall, broadcast(0)).c_str(),
                      "comm_broadcast (#7 on world): rank 1 gave up on it (it timed out waiting for rank 4) while "
                      "this rank ran broadcast int8 x 7 root 0");
}

void otherFailuresNameTheirStatus(void**) {
  const std::string text = describeNotice(notice(COMM_ERR_TRANSPORT, 5, -1), kCall, broadcast(2));
  assert_string_equal(text.c_str(), (std::string("comm_broadcast (#7 on world): rank 5 gave up on it (") +
                                     comm_status_string(COMM_ERR_TRANSPORT) +
                                     ") while this rank ran broadcast int8 "
                                     "x 7 root 2")
                                        .c_str());
}

// Only a timeout waiting for this very rank leaves it waiting: its own
// wait will say better whom it waits for.
void onlyATimeoutOnThisRankLeavesItWaiting(void**) {
  assert_true(leavesWaiting(notice(COMM_ERR_TIMEOUT, 1, 0), 0));
  assert_false(leavesWaiting(notice(COMM_ERR_TIMEOUT, 1, 2), 0));
  assert_false(leavesWaiting(notice(COMM_ERR_TIMEOUT, 1, -1), 0));
  assert_false(leavesWaiting(notice(COMM_ERR_MISMATCH, 1, 0), 0));
  assert_false(leavesWaiting(notice(COMM_ERR_REMOTE, 1, 0), 0));
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(aMismatchFoundElsewhereNamesBothSides), cmocka_unit_test(aDisagreementWithoutSidesSaysWhoGaveUp),
      cmocka_unit_test(aTimeoutNamesTheRankAwaited),           cmocka_unit_test(otherFailuresNameTheirStatus),
      cmocka_unit_test(onlyATimeoutOnThisRankLeavesItWaiting),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
