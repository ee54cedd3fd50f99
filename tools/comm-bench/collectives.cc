#include "collectives.h"

#include <array>

namespace commbench {
namespace {

constexpr Views same(Buffer in, Buffer out, size_t elements) { return {View{in, 0, elements}, View{out, 0, elements}}; }

double allReduceFactor(int ranks) { return 2.0 * (ranks - 1) / ranks; }
double gatherLikeFactor(int ranks) { return static_cast<double>(ranks - 1) / ranks; }
double oneFactor(int) { return 1.0; }
double noFactor(int) { return 0.0; }

// all_reduce: out = op over ranks of in.
Views allReduceViews(const Geometry& g, Placement p) {
  return same(p == Placement::kInPlace ? Buffer::kRecv : Buffer::kSend, Buffer::kRecv, g.count);
}
Source reducedAt(const Geometry&, size_t i) { return {kEveryRank, i}; }
comm_status_t allReduceStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_all_reduce(c, o.in, o.out, o.op, h);
}

// reduce: like all_reduce, output on the root only.
Views reduceViews(const Geometry& g, Placement p) {
  Views v = allReduceViews(g, p);
  if (g.rank != g.root) v.out.reset();
  return v;
}
comm_status_t reduceStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_reduce(c, o.in, o.out, o.op, o.root, h);
}

// broadcast: the root's in reaches every out; in place the root's out is its in.
Views broadcastViews(const Geometry& g, Placement p) {
  Views v = allReduceViews(g, p);
  if (g.rank != g.root) v.in.reset();
  return v;
}
Source fromRoot(const Geometry& g, size_t i) { return {g.root, i}; }
comm_status_t broadcastStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_broadcast(c, o.in, o.out, o.root, h);
}

// all_gather: out holds every rank's in, in rank order; in place, in is the
// rank's own block of out.
Views allGatherViews(const Geometry& g, Placement p) {
  size_t all = g.count * static_cast<size_t>(g.ranks);
  if (p == Placement::kInPlace) return {View{Buffer::kRecv, g.rank * g.count, g.count}, View{Buffer::kRecv, 0, all}};
  return {View{Buffer::kSend, 0, g.count}, View{Buffer::kRecv, 0, all}};
}
Source blockOfRank(const Geometry& g, size_t i) { return {static_cast<int>(i / g.count), i % g.count}; }
comm_status_t allGatherStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_all_gather(c, o.in, o.out, h);
}

// reduce_scatter: rank r gets block r of the reduction; in place, out is the
// rank's own block of in.
Views reduceScatterViews(const Geometry& g, Placement p) {
  size_t all = g.count * static_cast<size_t>(g.ranks);
  if (p == Placement::kInPlace) return {View{Buffer::kRecv, 0, all}, View{Buffer::kRecv, g.rank * g.count, g.count}};
  return {View{Buffer::kSend, 0, all}, View{Buffer::kRecv, 0, g.count}};
}
Source reducedOwnBlock(const Geometry& g, size_t i) { return {kEveryRank, g.rank * g.count + i}; }
comm_status_t reduceScatterStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_reduce_scatter(c, o.in, o.out, o.op, h);
}

// gather: all_gather with the output on the root only.
Views gatherViews(const Geometry& g, Placement p) {
  Views v = allGatherViews(g, p);
  if (g.rank != g.root) v.out.reset();
  return v;
}
comm_status_t gatherStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_gather(c, o.in, o.out, o.root, h);
}

// scatter: rank r gets block r of the root's in; in place, the root's out is
// its own block of in.
Views scatterViews(const Geometry& g, Placement p) {
  Views v = reduceScatterViews(g, p);
  if (g.rank != g.root) v.in.reset();
  return v;
}
Source rootsBlock(const Geometry& g, size_t i) { return {g.root, g.rank * g.count + i}; }
comm_status_t scatterStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_scatter(c, o.in, o.out, o.root, h);
}

// all_to_all (comm_all_to_all_single, even splits): block p of rank r's out
// is block r of rank p's in. comm.h has no in-place form.
Views allToAllViews(const Geometry& g, Placement) {
  return same(Buffer::kSend, Buffer::kRecv, g.count * static_cast<size_t>(g.ranks));
}
Source transposed(const Geometry& g, size_t i) {
  return {static_cast<int>(i / g.count), g.rank * g.count + i % g.count};
}
comm_status_t allToAllStart(comm_t* c, const Operands& o, comm_handle_t** h) {
  return comm_all_to_all_single(c, o.in, o.out, nullptr, nullptr, h);
}

// send_recv: a ring exchange, each rank sends to the next and receives from
// the previous at once (nccl-tests' sendrecv). Sending and receiving one
// buffer at once is not defined, so there is no in-place form.
Views sendRecvViews(const Geometry& g, Placement) { return same(Buffer::kSend, Buffer::kRecv, g.count); }
Source fromPrevious(const Geometry& g, size_t i) { return {(g.rank + g.ranks - 1) % g.ranks, i}; }
comm_status_t sendRecvBatch(comm_batch_t** out, const Geometry& g, comm_tensor_t* in, comm_tensor_t* received) {
  comm_batch_t* batch = nullptr;
  comm_status_t status = comm_batch_create(&batch);
  if (status != COMM_OK) return status;
  status = comm_batch_add_send(batch, in, (g.rank + 1) % g.ranks, 0);
  if (status == COMM_OK) status = comm_batch_add_recv(batch, received, (g.rank + g.ranks - 1) % g.ranks, 0);
  if (status != COMM_OK) {
    comm_batch_destroy(batch);
    return status;
  }
  *out = batch;
  return COMM_OK;
}
comm_status_t sendRecvStart(comm_t* c, const Operands& o, comm_handle_t** h) { return comm_batch_start(c, o.batch, h); }

// barrier: no data.
Views noViews(const Geometry&, Placement) { return {}; }
Source noSource(const Geometry&, size_t i) { return {kEveryRank, i}; }
comm_status_t barrierStart(comm_t* c, const Operands&, comm_handle_t** h) { return comm_barrier(c, h); }

// clang-format off: one collective per entry, laid out by hand as a table.
constexpr std::array kCollectives{
    Collective{.name = "all_reduce",
               .reduces = true,
               .busFactor = allReduceFactor,
               .busFactorFormula = "2(n-1)/n",
               .views = allReduceViews,
               .source = reducedAt,
               .start = allReduceStart},
    Collective{.name = "reduce",
               .reduces = true,
               .rooted = true,
               .busFactor = oneFactor,
               .busFactorFormula = "1",
               .views = reduceViews,
               .source = reducedAt,
               .start = reduceStart},
    Collective{.name = "broadcast",
               .rooted = true,
               .busFactor = oneFactor,
               .busFactorFormula = "1",
               .views = broadcastViews,
               .source = fromRoot,
               .start = broadcastStart},
    Collective{.name = "all_gather",
               .blockPerRank = true,
               .busFactor = gatherLikeFactor,
               .busFactorFormula = "(n-1)/n",
               .views = allGatherViews,
               .source = blockOfRank,
               .start = allGatherStart},
    Collective{.name = "reduce_scatter",
               .reduces = true,
               .blockPerRank = true,
               .busFactor = gatherLikeFactor,
               .busFactorFormula = "(n-1)/n",
               .views = reduceScatterViews,
               .source = reducedOwnBlock,
               .start = reduceScatterStart},
    Collective{.name = "gather",
               .rooted = true,
               .blockPerRank = true,
               .busFactor = gatherLikeFactor,
               .busFactorFormula = "(n-1)/n",
               .views = gatherViews,
               .source = blockOfRank,
               .start = gatherStart},
    Collective{.name = "scatter",
               .rooted = true,
               .blockPerRank = true,
               .busFactor = gatherLikeFactor,
               .busFactorFormula = "(n-1)/n",
               .views = scatterViews,
               .source = rootsBlock,
               .start = scatterStart},
    Collective{.name = "all_to_all",
               .blockPerRank = true,
               .hasInPlace = false,
               .busFactor = gatherLikeFactor,
               .busFactorFormula = "(n-1)/n",
               .views = allToAllViews,
               .source = transposed,
               .start = allToAllStart},
    Collective{.name = "send_recv",
               .hasInPlace = false,
               .busFactor = oneFactor,
               .busFactorFormula = "1",
               .views = sendRecvViews,
               .source = fromPrevious,
               .start = sendRecvStart,
               .makeBatch = sendRecvBatch},
    Collective{.name = "barrier",
               .sized = false,
               .hasInPlace = false,
               .busFactor = noFactor,
               .busFactorFormula = "0",
               .views = noViews,
               .source = noSource,
               .start = barrierStart},
};
// clang-format on

struct Alias {
  std::string_view alias;
  std::string_view name;
};
constexpr Alias kAliases[] = {
    {"allreduce", "all_reduce"},         {"bcast", "broadcast"},     {"allgather", "all_gather"},
    {"reducescatter", "reduce_scatter"}, {"alltoall", "all_to_all"}, {"all_to_all_single", "all_to_all"},
    {"sendrecv", "send_recv"},
};

}  // namespace

std::span<const Collective> collectives() { return kCollectives; }

const Collective* findCollective(std::string_view name) {
  for (const Alias& a : kAliases) {
    if (a.alias == name) name = a.name;
  }
  for (const Collective& c : kCollectives) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

size_t countOf(const Collective& collective, size_t bytes, size_t elementSize, int ranks) {
  if (!collective.sized) return 0;
  return bytes / elementSize / (collective.blockPerRank ? static_cast<size_t>(ranks) : 1);
}

size_t bytesOf(const Collective& collective, size_t count, size_t elementSize, int ranks) {
  return count * elementSize * (collective.blockPerRank ? static_cast<size_t>(ranks) : 1);
}

}  // namespace commbench
