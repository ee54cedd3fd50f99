#include "api/objects.h"

namespace comm::api {

LiveSet<comm_communicator>& liveCommunicators() {
  static LiveSet<comm_communicator> set;
  return set;
}
LiveSet<comm_handle>& liveHandles() {
  static LiveSet<comm_handle> set;
  return set;
}
LiveSet<comm_batch>& liveBatches() {
  static LiveSet<comm_batch> set;
  return set;
}
LiveSet<comm_config>& liveConfigs() {
  static LiveSet<comm_config> set;
  return set;
}
LiveSet<comm_tensor>& liveTensors() {
  static LiveSet<comm_tensor> set;
  return set;
}

core::Communicator& communicator(const comm_communicator* c) {
  liveCommunicators().check(c, "communicator", "comm");
  return *c->impl;
}

const comm_tensor& tensor(const comm_tensor* t, const char* name) {
  liveTensors().check(t, "tensor", name);
  return *t;
}

void checkRank(const core::Communicator& c, int rank, const char* what) {
  if (rank < 0 || rank >= c.size()) {
    fail(COMM_ERR_INVALID_ARGUMENT, "{} {} is outside 0..{} of communicator '{}'", what, rank, c.size() - 1, c.name());
  }
}

void handOut(comm_handle** out, std::shared_ptr<core::Operation> operation) {
  if (out == nullptr) return;
  auto* handle = new comm_handle{std::move(operation)};
  liveHandles().add(handle);
  *out = handle;
}

}  // namespace comm::api
