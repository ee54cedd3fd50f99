// The pure host logic of comm's CUDA paths, checked without a GPU: where a
// call's device buffers lie in the host memory that stands for them
// (cuda/staging_layout.h), and the slices ranks sharing a GPU reduce
// (algo/device/ipc_all_reduce.h).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "algo/device/ipc_all_reduce.h"
#include "cuda/staging.h"
#include "cuda/staging_layout.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace {

using comm::cuda::Staging;
using comm::cuda::StagingLayout;

// Device addresses: the layout only compares and subtracts them.
const char* const kDevice = reinterpret_cast<const char*>(uintptr_t{1} << 40);

void inPlaceBuffersShareHostMemory(void**) {
  StagingLayout layout;
  layout.add(kDevice, 1000, Staging::kIn);
  layout.add(kDevice, 1000, Staging::kOut);
  assert_int_equal(layout.arrange(), 1024);
  assert_int_equal(layout.regions().size(), 1);
  assert_int_equal(layout.regions()[0].use, Staging::kIn | Staging::kOut);
  assert_int_equal(layout.hostOffset(kDevice), 0);
  assert_int_equal(layout.hostOffset(kDevice + 999), 999);
}

// all_gather in place: this rank's block inside the output.
void aBlockLiesInsideItsOutput(void**) {
  StagingLayout layout;
  layout.add(kDevice, 4 * 300, Staging::kOut);
  layout.add(kDevice + 2 * 300, 300, Staging::kIn);
  assert_int_equal(layout.arrange(), 1280);
  assert_int_equal(layout.regions().size(), 1);
  assert_int_equal(layout.regions()[0].bytes, 1200);
  assert_int_equal(layout.hostOffset(kDevice + 600), 600);
}

// Out of place, the output below the input in device memory: regions in
// address order, each on an alignment boundary.
void apartBuffersGetAlignedRegionsInAddressOrder(void**) {
  StagingLayout layout;
  layout.add(kDevice + 10000, 100, Staging::kIn);
  layout.add(kDevice, 300, Staging::kOut);
  assert_int_equal(layout.arrange(), 512 + 256);
  const auto& regions = layout.regions();
  assert_int_equal(regions.size(), 2);
  assert_ptr_equal(regions[0].begin, kDevice);
  assert_int_equal(regions[0].use, Staging::kOut);
  assert_int_equal(regions[1].hostOffset, 512);
  assert_int_equal(regions[1].use, Staging::kIn);
  assert_int_equal(layout.hostOffset(kDevice + 10050), 512 + 50);
  for (const auto& r : regions) assert_int_equal(r.hostOffset % StagingLayout::kAlignment, 0);
}

// A chain of overlaps merges into one region; a buffer that only touches
// the end of another stays apart.
void overlapsChainAndTouchingBuffersStayApart(void**) {
  StagingLayout layout;
  layout.add(kDevice, 100, Staging::kIn);
  layout.add(kDevice + 50, 100, Staging::kOut);
  layout.add(kDevice + 140, 100, Staging::kIn);
  layout.add(kDevice + 240, 10, Staging::kOut);
  layout.arrange();
  const auto& regions = layout.regions();
  assert_int_equal(regions.size(), 2);
  assert_int_equal(regions[0].bytes, 240);
  assert_int_equal(regions[0].use, Staging::kIn | Staging::kOut);
  assert_ptr_equal(regions[1].begin, kDevice + 240);
  assert_int_equal(regions[1].hostOffset, 256);
}

void emptyBuffersTakeNoHostMemory(void**) {
  StagingLayout layout;
  layout.add(kDevice, 0, Staging::kIn);
  layout.add(kDevice, 0, Staging::kOut);
  assert_int_equal(layout.arrange(), 0);
  assert_true(layout.regions().empty());
  assert_int_equal(layout.hostOffset(kDevice), 0);
}

// Slices of a chunk cover it once, in rank order, aligned, for every rank
// count, element size and count (the last slices may be empty, starting at
// the chunk's end).
void deviceSlicesCoverTheChunk(void**) {
  for (int n = 1; n <= 8; ++n) {
    for (size_t element : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{64}, size_t{1000}, size_t{(1 << 20) + 3}}) {
        size_t next = 0;
        for (int q = 0; q < n; ++q) {
          const comm::algo::DeviceSlice slice = comm::algo::deviceSliceOf(q, n, count, element);
          assert_int_equal(slice.begin, next);
          if (slice.count > 0) assert_int_equal((slice.begin * element) % comm::algo::kDeviceSliceAlignment, 0);
          next += slice.count;
        }
        assert_int_equal(next, count);
      }
    }
  }
  // Large chunks split evenly: no rank's slice is more than one alignment
  // unit above an even share.
  const size_t count = size_t{9} << 20;
  for (int q = 0; q < 3; ++q) {
    assert_true(comm::algo::deviceSliceOf(q, 3, count, 4).count <= count / 3 + 64);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const CMUnitTest tests[] = {
      cmocka_unit_test(inPlaceBuffersShareHostMemory),
      cmocka_unit_test(aBlockLiesInsideItsOutput),
      cmocka_unit_test(apartBuffersGetAlignedRegionsInAddressOrder),
      cmocka_unit_test(overlapsChainAndTouchingBuffersStayApart),
      cmocka_unit_test(emptyBuffersTakeNoHostMemory),
      cmocka_unit_test(deviceSlicesCoverTheChunk),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
