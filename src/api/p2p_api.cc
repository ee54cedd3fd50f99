// comm_send, comm_recv and batches of both: argument checks around
// core/point_to_point.h.
#include "api/guard.h"
#include "api/objects.h"
#include "core/call_memory.h"
#include "core/point_to_point.h"
#include "core/small_buffer.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

namespace {

void checkTag(int tag) {
  if (tag < 0) fail(COMM_ERR_INVALID_ARGUMENT, "tag {} is negative (tags are 0..COMM_TAG_MAX)", tag);
}

// Posts the messages of `entries` in order and either waits (handle NULL)
// or hands out a handle. Device tensors travel through host memory (not
// ordered on a stream: docs/cuda.md): what is sent is copied to the host
// before the call posts it, what is received copied on to the device when
// the operation completes.
void start(comm_communicator* comm, std::span<const comm_batch::Entry> entries, comm_handle_t** handle,
           std::function<std::string()> what) {
  comm::core::Communicator& c = comm::api::communicator(comm);
  comm::core::CallMemory memory;
  for (const comm_batch::Entry& e : entries) {
    const char* name = entries.size() == 1 ? "tensor" : e.isSend ? "a send's tensor" : "a receive's tensor";
    memory.add(e.tensor, name, e.isSend ? comm::core::CallMemory::kIn : comm::core::CallMemory::kOut);
  }
  memory.prepare();
  std::shared_ptr<comm::cuda::Staging> staging = memory.staging();
  if (staging) {
    staging->enqueue(nullptr, nullptr);
    staging->toHost(c.deadline());
  }
  comm::core::SmallBuffer<comm::core::UserMessage, 4> messages(entries.size(), comm::core::kForOverwrite);
  for (size_t m = 0; m < entries.size(); ++m) {
    const comm_batch::Entry& e = entries[m];
    messages[m] = {e.isSend, e.peer, e.tag, memory.at(e.tensor.data), e.tensor.nbytes()};
  }
  auto op = comm::core::postUserMessages(comm->impl, {messages.data(), entries.size()}, std::move(what));
  if (staging) op->onSuccess([staging, impl = comm->impl] { staging->toDevice(impl->deadline()); });
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
    start(comm, {&e, 1}, handle, describe(e));
  });
}

COMM_API comm_status_t comm_recv(comm_t* comm, comm_tensor_t* tensor, int peer, int tag, comm_handle_t** handle) {
  return guardOut("comm_recv", handle, [&] {
    auto e = entry(comm, false, tensor, peer, tag);
    start(comm, {&e, 1}, handle, describe(e));
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
    start(comm, batch->entries, handle,
          [entries = batch->entries.size()] { return fmt::format("comm_batch_start ({} entries)", entries); });
  });
}

}  // extern "C"
