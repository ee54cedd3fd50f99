// Command hello is a module of its own that requires libcomm.org/comm
// (run.sh points its replace directive at a checkout): every rank
// all-reduces values any rank can compute and checks the sum and the max
// against a reference it computes itself.
package main

import (
	"fmt"
	"os"

	"libcomm.org/comm"
)

func contribution(rank, i int) float64 { return float64(rank)*1000 + float64(i)*0.5 }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	world, err := comm.Init()
	if err != nil {
		fail("%v", err)
	}
	defer world.Close()
	rank, size := world.Rank(), world.Size()
	sums := make([]float64, 1000)
	maxima := make([]int32, 1000)
	for i := range sums {
		sums[i] = contribution(rank, i)
		maxima[i] = int32((rank*7 + i) % 13)
	}
	if err := comm.AllReduce(world, sums, sums, comm.Sum); err != nil {
		fail("%v", err)
	}
	if err := comm.AllReduce(world, maxima, maxima, comm.Max); err != nil {
		fail("%v", err)
	}
	for i := range sums {
		expectedSum, expectedMax := 0.0, int32(0)
		for r := 0; r < size; r++ {
			expectedSum += contribution(r, i)
			if v := int32((r*7 + i) % 13); v > expectedMax {
				expectedMax = v
			}
		}
		if sums[i] != expectedSum || maxima[i] != expectedMax {
			fail("element %d: sum %v (expected %v), max %d (expected %d)", i, sums[i], expectedSum, maxima[i], expectedMax)
		}
	}
	fmt.Printf("rank %d of %d: all_reduce of 1000 float64 (sum) and int32 (max) as the reference\n", rank, size)
}
