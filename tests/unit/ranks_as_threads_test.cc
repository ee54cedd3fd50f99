// Ranks as threads (ranks_as_threads.h): the harness names a rank that
// fails, and every algorithm of every collective in its plain form
// (all_reduce, reduce, reduce_scatter, broadcast, all_gather, gather,
// scatter, all_to_all, barrier), forced through the algorithm overrides,
// matches a reference this test computes, at odd and even rank counts and
// across nodes cut by test_ranks_per_node; the reductions for every dtype
// and op the reduction supports. Their inputs are small integers, exact in
// every dtype and under every order of combination, so results compare
// bytewise.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "algo/collectives.h"
#include "algo/selection/registry.h"
#include "common/dtype.h"
#include "core/collective_context.h"
#include "reduce/reduce.h"

#include "ranks_as_threads.h"

// Last: cmocka defines a fail() macro that would rewrite comm::fail.
extern "C" {
#include <cmocka.h>
}

namespace {

using comm::core::CollectiveContext;
using comm::core::CollectiveKind;
using comm::core::Communicator;
using ranks_as_threads::Layout;
using ranks_as_threads::spawnRanks;

constexpr comm_dtype_t kLastDtype = COMM_BOOL;
constexpr comm_op_t kLastOp = COMM_OP_BXOR;

// Rank counts odd and even up to 16, on one node and cut into nodes (even
// and not).
const Layout kLayouts[] = {{1}, {2}, {3}, {4}, {5}, {8}, {16}, {4, 2}, {5, 2}, {8, 4}, {16, 4}};
// An element, and more elements than any group has ranks (uneven blocks).
constexpr size_t kCounts[] = {1, 1031};

// Rank `rank`'s element `i` for `op`: 0..3, or for prod mostly 1 and at most
// a few 2s (so that 16 ranks stay within float16).
int valueOf(int rank, size_t i, comm_op_t op) {
  if (op == COMM_OP_PROD) return (rank + i) % 5 == 0 ? 2 : 1;
  return static_cast<int>((rank * 7 + i * 3) % 4);
}

// `value` (0..3) as element `i` of `data`.
void store(void* data, size_t i, comm_dtype_t dtype, int value) {
  static constexpr uint16_t kHalf[] = {0x0000, 0x3C00, 0x4000, 0x4200};
  static constexpr uint16_t kBfloat[] = {0x0000, 0x3F80, 0x4000, 0x4040};
  auto put = [&](auto element) {
    std::memcpy(static_cast<char*>(data) + i * sizeof element, &element, sizeof element);
  };
  switch (dtype) {
    case COMM_INT8: return put(static_cast<int8_t>(value));
    case COMM_UINT8: return put(static_cast<uint8_t>(value));
    case COMM_INT16: return put(static_cast<int16_t>(value));
    case COMM_UINT16: return put(static_cast<uint16_t>(value));
    case COMM_INT32: return put(static_cast<int32_t>(value));
    case COMM_UINT32: return put(static_cast<uint32_t>(value));
    case COMM_INT64: return put(static_cast<int64_t>(value));
    case COMM_UINT64: return put(static_cast<uint64_t>(value));
    case COMM_FLOAT16: return put(kHalf[value]);
    case COMM_BFLOAT16: return put(kBfloat[value]);
    case COMM_FLOAT32: return put(static_cast<float>(value));
    case COMM_FLOAT64: return put(static_cast<double>(value));
    case COMM_BOOL: return put(static_cast<uint8_t>(value & 1));
  }
}

std::vector<char> inputOf(int rank, size_t count, comm_dtype_t dtype, comm_op_t op) {
  std::vector<char> data(count * comm::dtypeSize(dtype));
  for (size_t i = 0; i < count; ++i) store(data.data(), i, dtype, valueOf(rank, i, op));
  return data;
}

// What all_reduce must give: every rank's input combined in rank order.
std::vector<char> reference(int ranks, size_t count, comm_dtype_t dtype, comm_op_t op) {
  std::vector<char> result = inputOf(0, count, dtype, op);
  for (int rank = 1; rank < ranks; ++rank) {
    std::vector<char> input = inputOf(rank, count, dtype, op);
    comm::reduce::combine(result.data(), result.data(), input.data(), count, dtype, op);
  }
  if (op == COMM_OP_AVG) comm::reduce::finishAverage(result.data(), count, dtype, ranks);
  return result;
}

// Runs `body` as one collective of `kind` on `c`, as the API's launcher would.
template <typename Body>
void collective(Communicator& c, CollectiveKind kind, size_t count, comm_dtype_t dtype, comm_op_t op, int root,
                Body&& body) {
  comm::core::Signature signature;
  signature.kind = static_cast<uint16_t>(kind);
  signature.dtype = dtype;
  signature.op = op;
  signature.root = root;
  signature.count = static_cast<int64_t>(count);
  c.runCollective(
      [&](uint32_t sequence) {
        CollectiveContext ctx(c, sequence, signature);
        body(ctx);
        ctx.finish();
      },
      false);
}

void allReduce(Communicator& c, const void* in, void* out, size_t count, comm_dtype_t dtype, comm_op_t op) {
  collective(c, CollectiveKind::kAllReduce, count, dtype, op, -1,
             [&](CollectiveContext& ctx) { comm::algo::allReduce(ctx, in, out, count, dtype, op); });
}

// `check(dtype, op, count)` for every dtype and op the reduction supports, at every count.
template <typename Check>
void everyDtypeAndOp(Check&& check) {
  for (int d = 0; d <= kLastDtype; ++d) {
    for (int o = 0; o <= kLastOp; ++o) {
      const auto dtype = static_cast<comm_dtype_t>(d);
      const auto op = static_cast<comm_op_t>(o);
      if (!comm::reduce::supported(dtype, op)) continue;
      for (size_t count : kCounts) check(dtype, op, count);
    }
  }
}

void differs(const char* what, size_t count, comm_dtype_t dtype, comm_op_t op) {
  throw std::runtime_error(fmt::format("{} of {} x {} with {} differs from the reference", what, count,
                                       comm::dtypeName(dtype), comm::opName(op)));
}

// Checked on every rank.
void allReduceEverything(Communicator& c) {
  everyDtypeAndOp([&](comm_dtype_t dtype, comm_op_t op, size_t count) {
    std::vector<char> in = inputOf(c.rank(), count, dtype, op), out(in.size());
    allReduce(c, in.data(), out.data(), count, dtype, op);
    if (out != reference(c.size(), count, dtype, op)) differs("all_reduce", count, dtype, op);
  });
}

// To the first rank and to the last, checked there.
void reduceEverything(Communicator& c) {
  everyDtypeAndOp([&](comm_dtype_t dtype, comm_op_t op, size_t count) {
    for (int root : {0, c.size() - 1}) {
      std::vector<char> in = inputOf(c.rank(), count, dtype, op), out(in.size());
      collective(c, CollectiveKind::kReduce, count, dtype, op, root, [&](CollectiveContext& ctx) {
        comm::algo::reduce(ctx, in.data(), c.rank() == root ? out.data() : nullptr, count, dtype, op, root);
      });
      if (c.rank() == root && out != reference(c.size(), count, dtype, op)) differs("reduce", count, dtype, op);
    }
  });
}

// Each rank's block of every rank's input combined, checked on every rank.
void reduceScatterEverything(Communicator& c) {
  everyDtypeAndOp([&](comm_dtype_t dtype, comm_op_t op, size_t count) {
    const size_t element = comm::dtypeSize(dtype);
    std::vector<size_t> counts(c.size(), count), offsets(c.size());
    for (int r = 0; r < c.size(); ++r) offsets[r] = r * count;
    std::vector<char> in = inputOf(c.rank(), count * c.size(), dtype, op), out(count * element);
    collective(c, CollectiveKind::kReduceScatter, count, dtype, op, -1, [&](CollectiveContext& ctx) {
      comm::algo::reduceScatterV(ctx, in.data(), out.data(), counts.data(), offsets.data(), dtype, op);
    });
    std::vector<char> all = reference(c.size(), count * c.size(), dtype, op);
    const auto mine = all.begin() + static_cast<ptrdiff_t>(c.rank() * count * element);
    if (!std::equal(out.begin(), out.end(), mine)) differs("reduce_scatter", count, dtype, op);
  });
}

// Bytes that name their rank and offset.
std::vector<char> bytesOf(int rank, size_t size) {
  std::vector<char> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(rank * 31 + i * 7);
  return data;
}

// Message sizes for the data collectives: one byte, and sizes that cut
// into uneven blocks.
constexpr size_t kBytes[] = {1, 1031, 65537};

// From the first rank and from the last, checked everywhere.
void broadcastEverything(Communicator& c) {
  for (int root : {0, c.size() - 1}) {
    for (size_t bytes : kBytes) {
      std::vector<char> buffer = c.rank() == root ? bytesOf(root, bytes) : std::vector<char>(bytes);
      collective(c, CollectiveKind::kBroadcast, bytes, COMM_UINT8, COMM_OP_SUM, root,
                 [&](CollectiveContext& ctx) { comm::algo::broadcast(ctx, buffer.data(), bytes, root); });
      if (buffer != bytesOf(root, bytes))
        throw std::runtime_error(fmt::format("broadcast of {} bytes from {}", bytes, root));
    }
  }
}

// Every rank's block, checked everywhere.
void allGatherEverything(Communicator& c) {
  for (size_t bytes : kBytes) {
    std::vector<size_t> sizes(c.size(), bytes), offsets(c.size());
    for (int r = 0; r < c.size(); ++r) offsets[r] = r * bytes;
    std::vector<char> in = bytesOf(c.rank(), bytes), out(bytes * c.size()), expected;
    collective(c, CollectiveKind::kAllGather, bytes, COMM_UINT8, COMM_OP_SUM, -1, [&](CollectiveContext& ctx) {
      comm::algo::allGatherV(ctx, in.data(), out.data(), sizes.data(), offsets.data());
    });
    for (int r = 0; r < c.size(); ++r) {
      std::vector<char> block = bytesOf(r, bytes);
      expected.insert(expected.end(), block.begin(), block.end());
    }
    if (out != expected) throw std::runtime_error(fmt::format("all_gather of {} bytes a rank", bytes));
  }
}

// Every rank's bytes in rank order, as all_gather and gather lay them out.
std::vector<char> everyRanksBytes(int ranks, size_t bytes) {
  std::vector<char> all;
  for (int r = 0; r < ranks; ++r) {
    std::vector<char> block = bytesOf(r, bytes);
    all.insert(all.end(), block.begin(), block.end());
  }
  return all;
}

// To the first rank and to the last, checked there.
void gatherEverything(Communicator& c) {
  for (int root : {0, c.size() - 1}) {
    for (size_t bytes : kBytes) {
      std::vector<size_t> sizes(c.size(), bytes), offsets(c.size());
      for (int r = 0; r < c.size(); ++r) offsets[r] = r * bytes;
      std::vector<char> in = bytesOf(c.rank(), bytes), out(bytes * c.size());
      collective(c, CollectiveKind::kGather, bytes, COMM_UINT8, COMM_OP_SUM, root, [&](CollectiveContext& ctx) {
        comm::algo::gatherV(ctx, in.data(), c.rank() == root ? out.data() : nullptr, sizes.data(), offsets.data(),
                            root);
      });
      if (c.rank() == root && out != everyRanksBytes(c.size(), bytes)) {
        throw std::runtime_error(fmt::format("gather of {} bytes a rank to {}", bytes, root));
      }
    }
  }
}

// From the first rank and from the last, checked everywhere.
void scatterEverything(Communicator& c) {
  for (int root : {0, c.size() - 1}) {
    for (size_t bytes : kBytes) {
      std::vector<size_t> sizes(c.size(), bytes), offsets(c.size());
      for (int r = 0; r < c.size(); ++r) offsets[r] = r * bytes;
      std::vector<char> in = c.rank() == root ? everyRanksBytes(c.size(), bytes) : std::vector<char>(), out(bytes);
      collective(c, CollectiveKind::kScatter, bytes, COMM_UINT8, COMM_OP_SUM, root, [&](CollectiveContext& ctx) {
        comm::algo::scatterV(ctx, c.rank() == root ? in.data() : nullptr, out.data(), sizes.data(), offsets.data(),
                             root);
      });
      if (out != bytesOf(c.rank(), bytes)) {
        throw std::runtime_error(fmt::format("scatter of {} bytes a rank from {}", bytes, root));
      }
    }
  }
}

// Rank r sends rank p the bytes of r * ranks + p; every block checked.
void allToAllEverything(Communicator& c) {
  const int ranks = c.size();
  for (size_t bytes : kBytes) {
    std::vector<std::vector<char>> sent(ranks), received(ranks, std::vector<char>(bytes));
    std::vector<const void*> send(ranks);
    std::vector<void*> recv(ranks);
    std::vector<size_t> sizes(ranks, bytes);
    for (int p = 0; p < ranks; ++p) {
      sent[p] = bytesOf(c.rank() * ranks + p, bytes);
      send[p] = sent[p].data();
      recv[p] = received[p].data();
    }
    collective(c, CollectiveKind::kAllToAll, bytes, COMM_UINT8, COMM_OP_SUM, -1, [&](CollectiveContext& ctx) {
      comm::algo::allToAll(ctx, send.data(), sizes.data(), recv.data(), sizes.data());
    });
    for (int p = 0; p < ranks; ++p) {
      if (received[p] != bytesOf(p * ranks + c.rank(), bytes)) {
        throw std::runtime_error(fmt::format("all_to_all of {} bytes a pair: the block from rank {}", bytes, p));
      }
    }
  }
}

// Ends on every rank: nothing else to check.
void barrierTwice(Communicator& c) {
  for (int i = 0; i < 2; ++i) {
    collective(c, CollectiveKind::kBarrier, 0, COMM_UINT8, COMM_OP_SUM, -1,
               [](CollectiveContext& ctx) { comm::algo::barrier(ctx); });
  }
}

// `body` at every layout with each algorithm of `table` forced in turn.
void everyAlgorithm(const comm::algo::CollectiveTable& table, void (*body)(Communicator&)) {
  for (const comm::algo::AlgorithmInfo& algorithm : table.algorithms) {
    for (Layout layout : kLayouts) {
      layout.overrides[static_cast<size_t>(table.kind)] = algorithm.name;
      try {
        spawnRanks(layout, body);
      } catch (const std::exception& error) {
        fail_msg("%s:%.*s at %d ranks (nodes of %d): %s", comm::core::collectiveName(table.kind),
                 static_cast<int>(algorithm.name.size()), algorithm.name.data(), layout.ranks, layout.ranksPerNode,
                 error.what());
      }
    }
  }
}

void allReduceEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kAllReduceTable, allReduceEverything); }
void reduceEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kReduceTable, reduceEverything); }
void reduceScatterEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kReduceScatterTable, reduceScatterEverything); }
void barrierEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kBarrierTable, barrierTwice); }
void gatherEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kGatherTable, gatherEverything); }
void scatterEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kScatterTable, scatterEverything); }
void allToAllEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kAllToAllTable, allToAllEverything); }
void broadcastEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kBroadcastTable, broadcastEverything); }
void allGatherEveryAlgorithm(void**) { everyAlgorithm(comm::algo::kAllGatherTable, allGatherEverything); }

// A rank that throws is named, and the ranks that wait for it end too.
void failureNamesRank(void**) {
  try {
    spawnRanks({3}, [](Communicator& c) {
      if (c.rank() == 1) throw std::runtime_error("rank 1 gives up");
      std::vector<char> in(8), out(8);
      allReduce(c, in.data(), out.data(), 1, COMM_INT64, COMM_OP_SUM);
    });
  } catch (const std::exception& error) {
    const std::string report = error.what();
    assert_true(report.find("rank 1 of 3: rank 1 gives up") != std::string::npos);
    return;
  }
  fail_msg("rank 1's failure was not reported");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(failureNamesRank),        cmocka_unit_test(allReduceEveryAlgorithm),
      cmocka_unit_test(reduceEveryAlgorithm),    cmocka_unit_test(reduceScatterEveryAlgorithm),
      cmocka_unit_test(broadcastEveryAlgorithm), cmocka_unit_test(allGatherEveryAlgorithm),
      cmocka_unit_test(gatherEveryAlgorithm),    cmocka_unit_test(scatterEveryAlgorithm),
      cmocka_unit_test(allToAllEveryAlgorithm),  cmocka_unit_test(barrierEveryAlgorithm),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
