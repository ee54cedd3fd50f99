// The collectives' entry points: each fills a CollectiveCall with its
// arguments (api/collective_call.h) and hands it to runCollective()
// (api/collective_launch.cc), which checks it by its kind's row of the
// check table (api/collective_checks.h) and launches it.
#include "api/collective_call.h"

using comm::api::runCollective;
using enum comm::core::CollectiveKind;

extern "C" {

COMM_API comm_status_t comm_barrier(comm_t* comm, comm_handle_t** handle) {
  return runCollective({.kind = kBarrier, .comm = comm, .handle = handle});
}

COMM_API comm_status_t comm_all_reduce(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, comm_op_t op,
                                       comm_handle_t** handle) {
  return runCollective({.kind = kAllReduce, .comm = comm, .handle = handle, .in = in, .out = out, .op = op});
}

COMM_API comm_status_t comm_reduce(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, comm_op_t op, int root,
                                   comm_handle_t** handle) {
  return runCollective({.kind = kReduce, .comm = comm, .handle = handle, .in = in, .out = out, .op = op, .root = root});
}

COMM_API comm_status_t comm_broadcast(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, int root,
                                      comm_handle_t** handle) {
  return runCollective({.kind = kBroadcast, .comm = comm, .handle = handle, .in = in, .out = out, .root = root});
}

COMM_API comm_status_t comm_all_gather(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                       comm_handle_t** handle) {
  return runCollective({.kind = kAllGather, .comm = comm, .handle = handle, .in = in, .out = out});
}

COMM_API comm_status_t comm_reduce_scatter(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, comm_op_t op,
                                           comm_handle_t** handle) {
  return runCollective({.kind = kReduceScatter, .comm = comm, .handle = handle, .in = in, .out = out, .op = op});
}

COMM_API comm_status_t comm_gather(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, int root,
                                   comm_handle_t** handle) {
  return runCollective({.kind = kGather, .comm = comm, .handle = handle, .in = in, .out = out, .root = root});
}

COMM_API comm_status_t comm_scatter(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, int root,
                                    comm_handle_t** handle) {
  return runCollective({.kind = kScatter, .comm = comm, .handle = handle, .in = in, .out = out, .root = root});
}

COMM_API comm_status_t comm_all_to_all_single(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                              const int64_t* out_splits, const int64_t* in_splits,
                                              comm_handle_t** handle) {
  return runCollective({.kind = kAllToAllSingle,
                        .comm = comm,
                        .handle = handle,
                        .in = in,
                        .out = out,
                        .inSplits = in_splits,
                        .outSplits = out_splits});
}

COMM_API comm_status_t comm_all_to_all(comm_t* comm, int nins, const comm_tensor_t* const* ins, int nouts,
                                       comm_tensor_t* const* outs, comm_handle_t** handle) {
  return runCollective(
      {.kind = kAllToAll, .comm = comm, .handle = handle, .nins = nins, .ins = ins, .nouts = nouts, .outs = outs});
}

COMM_API comm_status_t comm_all_gather_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                         const int64_t* counts, comm_handle_t** handle) {
  return runCollective({.kind = kAllGatherV, .comm = comm, .handle = handle, .in = in, .out = out, .counts = counts});
}

COMM_API comm_status_t comm_reduce_scatter_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out,
                                             const int64_t* counts, comm_op_t op, comm_handle_t** handle) {
  return runCollective(
      {.kind = kReduceScatterV, .comm = comm, .handle = handle, .in = in, .out = out, .op = op, .counts = counts});
}

COMM_API comm_status_t comm_gather_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, const int64_t* counts,
                                     int root, comm_handle_t** handle) {
  return runCollective(
      {.kind = kGatherV, .comm = comm, .handle = handle, .in = in, .out = out, .root = root, .counts = counts});
}

COMM_API comm_status_t comm_scatter_v(comm_t* comm, const comm_tensor_t* in, comm_tensor_t* out, const int64_t* counts,
                                      int root, comm_handle_t** handle) {
  return runCollective(
      {.kind = kScatterV, .comm = comm, .handle = handle, .in = in, .out = out, .root = root, .counts = counts});
}

}  // extern "C"
