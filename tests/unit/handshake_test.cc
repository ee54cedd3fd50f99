// The proof of the job's secret (common/handshake.h) without sockets: two
// state machines fed each other's bytes, and the ways a peer without the
// secret might try to get past one.
#include <cstring>
#include <string>

#include "common/handshake.h"
#include "common/hmac.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::Handshake;

namespace {

const std::string kSecret = "handshake test secret 0123456789";

// Moves bytes between the two sides until neither has anything to send.
void converse(Handshake& accepting, Handshake& connecting) {
  for (int turn = 0; turn < 4; ++turn) {
    connecting.feed(accepting.takeOutput());
    accepting.feed(connecting.takeOutput());
  }
}

void theSameSecretOpensBothWaysAndCarriesTheClaim(void**) {
  Handshake accepting = Handshake::accepting(kSecret, "tcp");
  Handshake connecting = Handshake::connecting(kSecret, "tcp", 41);
  converse(accepting, connecting);
  assert_int_equal(accepting.state(), Handshake::State::kDone);
  assert_int_equal(connecting.state(), Handshake::State::kDone);
  assert_int_equal(accepting.claim(), 41);
  assert_int_equal(accepting.wanted(), 0);
  assert_int_equal(connecting.wanted(), 0);
}

void anotherSecretIsRefused(void**) {
  Handshake accepting = Handshake::accepting(kSecret, "tcp");
  Handshake connecting = Handshake::connecting("another secret 0123456789abcdef", "tcp", 1);
  converse(accepting, connecting);
  assert_int_equal(accepting.state(), Handshake::State::kRefused);
  assert_string_equal(accepting.refusal().c_str(), "it did not prove the job's secret");
  // Refused, the accepting side says nothing more: no proof of its own.
  assert_int_equal(connecting.state(), Handshake::State::kRunning);
}

void aProofForAnotherContextIsRefused(void**) {
  Handshake accepting = Handshake::accepting(kSecret, "store");
  Handshake connecting = Handshake::connecting(kSecret, "tcp", 0);
  converse(accepting, connecting);
  assert_int_equal(accepting.state(), Handshake::State::kRefused);
}

// An answer recorded on the wire does not open a second connection: the
// challenge is new each time.
void aReplayedAnswerIsRefused(void**) {
  Handshake first = Handshake::accepting(kSecret, "tcp");
  Handshake member = Handshake::connecting(kSecret, "tcp", 1);
  member.feed(first.takeOutput());
  const std::string recorded = member.takeOutput();
  Handshake second = Handshake::accepting(kSecret, "tcp");
  second.takeOutput();
  second.feed(recorded);
  assert_int_equal(second.state(), Handshake::State::kRefused);
}

// The claim is covered by the proof: changing it on the way fails.
void aChangedClaimIsRefused(void**) {
  Handshake accepting = Handshake::accepting(kSecret, "tcp");
  Handshake connecting = Handshake::connecting(kSecret, "tcp", 2);
  connecting.feed(accepting.takeOutput());
  std::string answer = connecting.takeOutput();
  answer[Handshake::kNonceBytes] = 1;  // the claim's low byte: rank 1 instead of 2
  accepting.feed(answer);
  assert_int_equal(accepting.state(), Handshake::State::kRefused);
}

void aServerWithoutTheSecretIsNotBelieved(void**) {
  Handshake impostor = Handshake::accepting("impostor secret 0123456789abcdef", "tcp");
  Handshake connecting = Handshake::connecting(kSecret, "tcp", 1);
  connecting.feed(impostor.takeOutput());
  connecting.takeOutput();
  connecting.feed(std::string(Handshake::kConfirmationBytes, '\0'));
  assert_int_equal(connecting.state(), Handshake::State::kRefused);
}

void somethingElseThanCommIsNamed(void**) {
  Handshake connecting = Handshake::connecting(kSecret, "tcp", 1);
  connecting.feed(std::string("HTTP/1.1 400 Bad Request\r\n\r\n") + std::string(20, ' '));
  assert_int_equal(connecting.state(), Handshake::State::kRefused);
  assert_non_null(strstr(connecting.refusal().c_str(), "does not speak comm's handshake"));
}

// Bytes that arrive one at a time make the same handshake; bytes beyond it
// are not taken.
void bytesMayComeOneByOne(void**) {
  Handshake accepting = Handshake::accepting(kSecret, "tcp");
  Handshake connecting = Handshake::connecting(kSecret, "tcp", 5);
  const std::string challenge = accepting.takeOutput();
  for (char byte : challenge) connecting.feed(std::string(1, byte));
  const std::string answer = connecting.takeOutput() + "the first request";
  for (size_t i = 0; i < answer.size() && accepting.wanted() > 0; ++i) accepting.feed(answer.substr(i, 1));
  assert_int_equal(accepting.state(), Handshake::State::kDone);
  connecting.feed(accepting.takeOutput());
  assert_int_equal(connecting.state(), Handshake::State::kDone);
}

void hmacMatchesRfc4231(void**) {
  // RFC 4231, test case 2.
  assert_string_equal(comm::hexDigits(comm::hmacSha256("Jefe", "what do ya want for nothing?")).c_str(),
                      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  assert_true(comm::sameBytes("abc", "abc"));
  assert_false(comm::sameBytes("abc", "abd"));
  assert_false(comm::sameBytes("abc", "abcd"));
  assert_int_equal(comm::randomBytes(32).size(), 32);
  assert_true(comm::randomBytes(32) != comm::randomBytes(32));
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(theSameSecretOpensBothWaysAndCarriesTheClaim),
      cmocka_unit_test(anotherSecretIsRefused),
      cmocka_unit_test(aProofForAnotherContextIsRefused),
      cmocka_unit_test(aReplayedAnswerIsRefused),
      cmocka_unit_test(aChangedClaimIsRefused),
      cmocka_unit_test(aServerWithoutTheSecretIsNotBelieved),
      cmocka_unit_test(somethingElseThanCommIsNamed),
      cmocka_unit_test(bytesMayComeOneByOne),
      cmocka_unit_test(hmacMatchesRfc4231),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
