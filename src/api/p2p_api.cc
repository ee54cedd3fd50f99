// comm_send, comm_recv and batches of both: argument checks around
// core/point_to_point.h.
#include "api/guard.h"
#include "api/objects.h"
#include "core/point_to_point.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

namespace {

void checkTag(int tag) {
  if (tag < 0) fail(COMM_ERR_INVALID_ARGUMENT, "tag {} is negative (tags are 0..COMM_TAG_MAX)", tag);
}

comm::core::UserMessage message(const comm_batch::Entry& e) {
  return {e.isSend, e.peer, e.tag, e.tensor.data, e.tensor.nbytes()};
}

// Posts `messages` in order and either waits (handle NULL) or hands out a handle.
void start(comm_communicator* comm, std::span<const comm::core::UserMessage> messages, comm_handle_t** handle,
           std::function<std::string()> what) {
  comm::api::communicator(comm);
  auto op = comm::core::postUserMessages(comm->impl, messages, std::move(what));
  if (handle == nullptr) {
    comm_status_t status = op->wait(comm::Deadline::never());
    if (status != COMM_OK) throw comm::Error(status, op->message());
    return;
  }
  op->detach();
  comm::api::handOut(handle, std::move(op));
}

// Names a single send or receive in error messages; formatted only when one is written.
std::function<std::string()> describe(const comm_batch::Entry& e) {
  return [isSend = e.isSend, peer = e.peer, tag = e.tag, bytes = e.tensor.nbytes()] {
    return fmt::format("comm_{} rank {} tag {} ({} bytes)", isSend ? "send to" : "recv from", peer, tag, bytes);
  };
}

comm_batch::Entry entry(comm_communicator* comm, bool isSend, const comm_tensor* tensor, int peer, int tag) {
  comm::core::Communicator& c = comm::api::communicator(comm);
  const comm_tensor& t = comm::api::tensor(tensor, "tensor");
  comm::api::checkRank(c, peer, "peer");
  checkTag(tag);
  return {isSend, t, peer, tag};
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_send(comm_t* comm, const comm_tensor_t* tensor, int peer, int tag, comm_handle_t** handle) {
  return guardOut("comm_send", handle, [&] {
    auto e = entry(comm, true, tensor, peer, tag);
    const comm::core::UserMessage m = message(e);
    start(comm, {&m, 1}, handle, describe(e));
  });
}

COMM_API comm_status_t comm_recv(comm_t* comm, comm_tensor_t* tensor, int peer, int tag, comm_handle_t** handle) {
  return guardOut("comm_recv", handle, [&] {
    auto e = entry(comm, false, tensor, peer, tag);
    const comm::core::UserMessage m = message(e);
    start(comm, {&m, 1}, handle, describe(e));
  });
}

COMM_API comm_status_t comm_batch_create(comm_batch_t** out) {
  return guardOut("comm_batch_create", out, [&] {
    require(out, "out");
    auto* batch = new comm_batch();
    comm::api::liveBatches().add(batch);
    *out = batch;
  });
}

COMM_API comm_status_t comm_batch_destroy(comm_batch_t* batch) {
  return guard("comm_batch_destroy", [&] {
    if (batch == nullptr) return;
    if (!comm::api::liveBatches().remove(batch)) {
      fail(COMM_ERR_INVALID_USAGE, "batch {} was destroyed before or never created", static_cast<void*>(batch));
    }
    delete batch;
  });
}

static void addEntry(comm_batch* batch, bool isSend, const comm_tensor* tensor, int peer, int tag) {
  comm::api::liveBatches().check(batch, "batch", "batch");
  const comm_tensor& t = comm::api::tensor(tensor, "tensor");
  if (peer < 0) fail(COMM_ERR_INVALID_ARGUMENT, "peer {} is negative", peer);
  checkTag(tag);
  batch->entries.push_back({isSend, t, peer, tag});
}

COMM_API comm_status_t comm_batch_add_send(comm_batch_t* batch, const comm_tensor_t* tensor, int peer, int tag) {
  return guard("comm_batch_add_send", [&] { addEntry(batch, true, tensor, peer, tag); });
}

COMM_API comm_status_t comm_batch_add_recv(comm_batch_t* batch, comm_tensor_t* tensor, int peer, int tag) {
  return guard("comm_batch_add_recv", [&] { addEntry(batch, false, tensor, peer, tag); });
}

COMM_API comm_status_t comm_batch_start(comm_t* comm, const comm_batch_t* batch, comm_handle_t** handle) {
  return guardOut("comm_batch_start", handle, [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    comm::api::liveBatches().check(batch, "batch", "batch");
    for (const comm_batch::Entry& e : batch->entries) comm::api::checkRank(c, e.peer, "peer of a batch entry");
    std::vector<comm::core::UserMessage> messages;
    for (const comm_batch::Entry& e : batch->entries) messages.push_back(message(e));
    start(comm, messages, handle,
          [entries = batch->entries.size()] { return fmt::format("comm_batch_start ({} entries)", entries); });
  });
}

}  // extern "C"
