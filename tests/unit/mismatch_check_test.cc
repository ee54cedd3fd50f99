// The mismatch check's edges (core/mismatch_check.h) over node layouts of
// every shape a communicator can have: one node, equal nodes, uneven nodes,
// ranks interleaved across nodes. The edges must make one spanning tree
// whose only crossings between nodes join consecutive nodes' first ranks.
// The signature messages among real ranks are checked by the mismatch
// cases of tests/multiproc.
#include <string>
#include <vector>

#include "common/error.h"
#include "core/communicator.h"
#include "core/mismatch_check.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using comm::core::CollectiveKind;
using comm::core::NodeLayout;
using comm::core::Signature;
using comm::core::SignatureEdges;
using comm::core::signatureEdges;

// The layout of ranks on the nodes `nodeOf` names (nodes numbered by first
// appearance, as Communicator::layOutNodes numbers them).
NodeLayout layout(const std::vector<int>& nodeOf) {
  NodeLayout nodes;
  for (int r = 0; r < static_cast<int>(nodeOf.size()); ++r) {
    const int node = nodeOf[r];
    if (node == nodes.count()) nodes.members.emplace_back();
    assert_true(node < nodes.count());
    nodes.nodeOf.push_back(node);
    nodes.localRank.push_back(static_cast<int>(nodes.members[node].size()));
    nodes.members[node].push_back(r);
  }
  return nodes;
}

const std::vector<std::vector<int>> kLayouts = {
    {0},
    {0, 0},
    {0, 0, 0, 0, 0},
    {0, 1},
    {0, 0, 1, 1},
    {0, 0, 0, 1, 1, 1, 2, 2, 2},
    {0, 1, 0, 1, 0, 1, 0},     // round-robin, uneven
    {0, 0, 0, 0, 0, 1, 2, 2},  // one node of one rank
    {0, 1, 2, 3, 4, 5, 6, 7},  // a rank per node
    {0, 1, 1, 2, 0, 2, 1, 3},
};

// Every edge is seen from both ends: a rank's `to` names it as their
// `from`, and its `from` names it in their `to`.
void edgesAgreeAtBothEnds(void**) {
  for (const std::vector<int>& nodeOf : kLayouts) {
    const NodeLayout nodes = layout(nodeOf);
    const int size = static_cast<int>(nodeOf.size());
    for (int r = 0; r < size; ++r) {
      const SignatureEdges edges = signatureEdges(nodes, r);
      for (int to : edges.to) {
        if (to < 0) continue;
        assert_true(to != r);
        assert_int_equal(signatureEdges(nodes, to).from, r);
      }
      if (edges.from >= 0) {
        const SignatureEdges parent = signatureEdges(nodes, edges.from);
        assert_true(parent.to[0] == r || parent.to[1] == r);
      }
    }
  }
}

// One root (node 0's first rank); every other rank reaches it through its
// `from`s without a cycle, so the edges span all ranks as one tree.
void edgesMakeOneSpanningTree(void**) {
  for (const std::vector<int>& nodeOf : kLayouts) {
    const NodeLayout nodes = layout(nodeOf);
    const int size = static_cast<int>(nodeOf.size());
    int roots = 0;
    for (int r = 0; r < size; ++r) {
      if (signatureEdges(nodes, r).from < 0) {
        ++roots;
        assert_int_equal(r, nodes.members[0][0]);
      }
      int at = r;
      for (int hops = 0; hops < size && at != nodes.members[0][0]; ++hops) at = signatureEdges(nodes, at).from;
      assert_int_equal(at, nodes.members[0][0]);
    }
    assert_int_equal(roots, 1);
  }
}

// Within a node the edges chain its ranks in order; between nodes only
// H - 1 edges cross, each from node k's first rank to node k + 1's.
void onlyFirstRanksCrossBetweenNodes(void**) {
  for (const std::vector<int>& nodeOf : kLayouts) {
    const NodeLayout nodes = layout(nodeOf);
    const int size = static_cast<int>(nodeOf.size());
    int crossings = 0;
    for (int r = 0; r < size; ++r) {
      const SignatureEdges edges = signatureEdges(nodes, r);
      const int localRank = nodes.localRank[r];
      const std::vector<int>& mates = nodes.members[nodes.nodeOf[r]];
      assert_int_equal(edges.to[0], localRank + 1 < static_cast<int>(mates.size()) ? mates[localRank + 1] : -1);
      if (edges.to[1] < 0) continue;
      ++crossings;
      assert_int_equal(localRank, 0);
      assert_int_equal(nodes.nodeOf[edges.to[1]], nodes.nodeOf[r] + 1);
      assert_int_equal(nodes.localRank[edges.to[1]], 0);
    }
    assert_int_equal(crossings, nodes.count() - 1);
  }
}

// The report names both ranks and what each ran.
void aMismatchNamesBothSides(void**) {
  Signature ours;
  ours.kind = static_cast<uint16_t>(CollectiveKind::kAllReduce);
  ours.dtype = COMM_FLOAT32;
  ours.count = 1024;
  ours.op = COMM_OP_SUM;
  Signature theirs = ours;
  theirs.count = 512;
  try {
    comm::core::failMismatch(ours, 2, 1, theirs);
  } catch (const comm::Error& e) {
    assert_int_equal(e.status(), COMM_ERR_MISMATCH);
    assert_string_equal(e.what(),
                        "comm_all_reduce: rank 2 all_reduce float32 x 1024 sum vs rank 1 all_reduce "
                        "float32 x 512 sum");
    return;
  }
  fail_msg("failMismatch returned");
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(edgesAgreeAtBothEnds),
      cmocka_unit_test(edgesMakeOneSpanningTree),
      cmocka_unit_test(onlyFirstRanksCrossBetweenNodes),
      cmocka_unit_test(aMismatchNamesBothSides),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
