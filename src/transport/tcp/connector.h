// How comm's tcp transport sets up its connections: it listens as soon as it
// is made, and connect() gives it one connection per peer, each proven with
// the job's secret (common/handshake.h) before a byte of a message crosses
// it. What then travels on the connections is connection.h's.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/deadline.h"
#include "common/unique_fd.h"
#include "transport/options.h"
#include "transport/transport.h"

namespace comm::transport::tcp {

struct Newcomer;

class Connector {
 public:
  // Listens on loopback when options.singleNode, else on the interface
  // options.tcpInterface names or the first one that is up. Throws
  // comm::Error (COMM_ERR_TRANSPORT) naming the cause.
  explicit Connector(const Options& options);

  // Where this rank listens, the address its peers connect to.
  const sockaddr_in& address() const { return address_; }

  // Fills `connections` (one per rank) with a proven connection to each
  // peer that has an address (the others', and this rank's, stay not
  // valid), then stops listening. Each pair gets one: the higher rank calls,
  // the lower one accepts. Throws COMM_ERR_TRANSPORT when a peer cannot be
  // reached, COMM_ERR_TIMEOUT when peers do not come within the connect
  // timeout; the connections proven by then stay in `connections`.
  void connect(int selfRank, const std::vector<PeerInfo>& peers, std::vector<UniqueFd>& connections);

 private:
  // Accepts connections until `awaited` higher ranks have proven the secret.
  void acceptPeers(std::vector<UniqueFd>& connections, int awaited, Deadline deadline);
  // Moves a newcomer's handshake on; returns false when it is over (the
  // peer taken into `connections` or turned away).
  bool advance(Newcomer& newcomer, std::vector<UniqueFd>& connections, int& awaited);

  sockaddr_in address_{};
  std::string secret_;
  std::chrono::milliseconds connectTimeout_;
  UniqueFd listener_;
  int self_ = -1;
};

}  // namespace comm::transport::tcp
