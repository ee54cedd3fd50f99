// The rank arithmetic of algo/patterns/, without a fabric: trees, rings,
// folds and blocks checked against what they promise, for every group
// size up to 33 and every root.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "algo/patterns/binomial_tree.h"
#include "algo/patterns/blocks.h"
#include "algo/patterns/fold.h"
#include "algo/patterns/ring.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace {

using comm::algo::BinomialTree;
using comm::algo::Blocks;
using comm::algo::Fold;

constexpr int kLargestGroup = 33;

// Every rank but the root has a parent that lists it as a child; every
// subtree is the vrank range [v, v + span(v)), the children's subtrees tile
// it after v itself, and the depth is ceil(log2 n).
void binomialTreeCoversEveryRankOnce(void**) {
  for (int n = 1; n <= kLargestGroup; ++n) {
    for (int root = 0; root < n; ++root) {
      int depth = 0;
      while ((1 << depth) < n) ++depth;
      for (int rank = 0; rank < n; ++rank) {
        BinomialTree tree(n, rank, root);
        assert_int_equal(tree.rankOf(tree.vrank()), rank);
        assert_int_equal(tree.isRoot(), rank == root);
        std::vector<int> children;
        tree.forEachChild([&](int child) { children.push_back(child); });
        // Largest subtree first, which is the one furthest up the range.
        assert_true(std::is_sorted(children.rbegin(), children.rend()));
        int covered = tree.vrank() + 1;
        for (auto child = children.rbegin(); child != children.rend(); ++child) {
          assert_int_equal(*child, covered);  // the subtrees tile the range after v
          BinomialTree childTree(n, tree.rankOf(*child), root);
          assert_int_equal(childTree.parent(), rank);
          covered += childTree.span();
        }
        assert_int_equal(covered, tree.vrank() + tree.span());
        if (tree.isRoot()) assert_int_equal(tree.span(), n);
        int hops = 0;
        for (BinomialTree at = tree; !at.isRoot(); at = BinomialTree(n, at.parent(), root)) ++hops;
        assert_true(hops <= depth);
      }
    }
  }
}

void ringNeighboursFormOneCycle(void**) {
  for (int n = 1; n <= kLargestGroup; ++n) {
    int rank = 0;
    for (int step = 0; step < n; ++step) {
      auto [left, right] = comm::algo::ringNeighbours(rank, n);
      assert_int_equal(comm::algo::ringNeighbours(right, n).left, rank);
      assert_int_equal(comm::algo::ringNeighbours(left, n).right, rank);
      rank = right;
      if (step + 1 < n) assert_int_not_equal(rank, 0);
    }
    assert_int_equal(rank, 0);
  }
}

void blocksSplitEvenlyAndInOrder(void**) {
  for (int parts = 1; parts <= kLargestGroup; ++parts) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{1001}}) {
      Blocks blocks = Blocks::even(count, parts);
      assert_int_equal(blocks.parts(), parts);
      assert_int_equal(blocks.total(), count);
      for (int i = 0; i < parts; ++i) {
        assert_int_equal(blocks.offsets()[i + 1] - blocks.offsets()[i], blocks.counts()[i]);
        assert_true(blocks.counts()[i] == count / parts + (static_cast<size_t>(i) < count % parts ? 1 : 0));
      }
      assert_int_equal(blocks.span(0, parts), count);
    }
  }
}

// Blocks made from counts, appended, all alike or scaled to another unit
// lie back to back in order, on the stack or beyond it (over 16 parts).
void blocksLieBackToBack(void**) {
  for (int parts = 1; parts <= kLargestGroup; ++parts) {
    std::vector<size_t> counts(parts);
    for (int i = 0; i < parts; ++i) counts[i] = static_cast<size_t>(i % 3);
    const Blocks given = Blocks::fromCounts(counts.data(), parts);
    Blocks appended(parts);
    for (size_t c : counts) appended.append(c);
    const Blocks alike = Blocks::uniform(parts, 6);
    const Blocks inBytes = given.scaled(4);
    size_t end = 0;
    for (int i = 0; i < parts; ++i) {
      assert_int_equal(given.counts()[i], counts[i]);
      assert_int_equal(given.offsets()[i], end);
      assert_int_equal(appended.counts()[i], counts[i]);
      assert_int_equal(appended.offsets()[i], end);
      assert_int_equal(alike.counts()[i], 6);
      assert_int_equal(alike.offsets()[i], 6 * static_cast<size_t>(i));
      assert_int_equal(inBytes.counts()[i], 4 * counts[i]);
      assert_int_equal(inBytes.offsets()[i], 4 * end);
      end += counts[i];
    }
    assert_int_equal(given.total(), end);
    assert_int_equal(appended.total(), end);
    assert_int_equal(alike.total(), 6 * static_cast<size_t>(parts));
    assert_int_equal(inBytes.total(), 4 * end);
    const Blocks copied = given;
    assert_int_equal(copied.span(0, parts), end);
  }
}

// The participants of a fold cover the ranks in order: participant i
// carries ranks [firstRankOf(i), rankOf(i)], the pairs' even ranks hand
// over, and the participants are the largest power of two <= n.
void foldCoversTheRanksInOrder(void**) {
  for (int n = 1; n <= kLargestGroup; ++n) {
    int p = 1;
    while (p * 2 <= n) p *= 2;
    std::vector<int> carried(n, 0);
    for (int rank = 0; rank < n; ++rank) {
      Fold fold(n, rank);
      assert_int_equal(fold.participants(), p);
      if (fold.handsOver()) {
        assert_int_equal(Fold(n, fold.partner()).partner(), rank);
        assert_true(Fold(n, fold.partner()).carriesPartner());
      } else {
        assert_int_equal(fold.rankOf(fold.newRank()), rank);
      }
    }
    int next = 0;
    for (int i = 0; i < p; ++i) {
      Fold any(n, 0);
      assert_int_equal(any.firstRankOf(i), next);
      for (int r = any.firstRankOf(i); r <= any.rankOf(i); ++r) ++carried[r];
      next = any.rankOf(i) + 1;
    }
    assert_int_equal(next, n);
    assert_true(std::all_of(carried.begin(), carried.end(), [](int c) { return c == 1; }));
    Blocks perRank = Blocks::even(1000, n);
    Blocks perParticipant = Fold(n, 0).participantBlocks(perRank);
    assert_int_equal(perParticipant.parts(), p);
    assert_int_equal(perParticipant.total(), 1000);
  }
}

// Adjacent blocks travel as one run, a range wrapping past the last rank
// as two, and empty blocks as none.
void blocksJoinAdjacentIntoRuns(void**) {
  const size_t bytes[] = {10, 0, 5, 5, 8};
  const Blocks blocks = Blocks::fromCounts(bytes, 5);
  const size_t* offsets = blocks.offsets();  // 0, 10, 10, 15, 20
  std::vector<Blocks::Run> runs;
  auto collect = [&](Blocks::Run run) { runs.push_back(run); };
  Blocks::forEachRun(5, bytes, offsets, 0, 5, collect);
  assert_int_equal(runs.size(), 1);
  assert_int_equal(runs[0].offset, 0);
  assert_int_equal(runs[0].count, 28);
  runs.clear();
  Blocks::forEachRun(5, bytes, offsets, 3, 3, collect);  // ranks 3, 4, 0: wraps
  assert_int_equal(runs.size(), 2);
  assert_int_equal(runs[0].offset, 15);
  assert_int_equal(runs[0].count, 13);
  assert_int_equal(runs[1].offset, 0);
  assert_int_equal(runs[1].count, 10);
  assert_int_equal(Blocks::countOf(5, bytes, 3, 3), 23);
  runs.clear();
  Blocks::forEachRun(5, bytes, offsets, 1, 1, collect);
  assert_int_equal(runs.size(), 0);
  const size_t gapped[] = {0, 12, 12, 20, 25};  // a gap between blocks 2 and 3
  Blocks::forEachRun(5, bytes, gapped, 2, 3, collect);
  assert_int_equal(runs.size(), 2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(binomialTreeCoversEveryRankOnce), cmocka_unit_test(ringNeighboursFormOneCycle),
      cmocka_unit_test(blocksSplitEvenlyAndInOrder),     cmocka_unit_test(blocksLieBackToBack),
      cmocka_unit_test(foldCoversTheRanksInOrder),       cmocka_unit_test(blocksJoinAdjacentIntoRuns),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
