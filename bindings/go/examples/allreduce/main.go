// Command allreduce averages a "gradient" over every rank of a job, the way
// a data-parallel training step does, overlapping the all-reduce with other
// work, and checks the result.
//
//	commrun -n 4 allreduce-example
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"libcomm.org/comm"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "allreduce:", err)
		os.Exit(1)
	}
}

func run() error {
	world, err := comm.Init()
	if err != nil {
		return err
	}
	defer world.Close()
	rank, size := world.Rank(), world.Size()

	// comm reads and writes the slice in place: no copies.
	gradient := make([]float32, 1<<20)
	for i := range gradient {
		gradient[i] = float32(rank + i%7)
	}
	started := time.Now()
	pending, err := comm.AllReduceAsync(world, gradient, gradient, comm.Avg)
	if err != nil {
		return err
	}
	// ... the next batch would be prepared here, without touching gradient ...
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pending.Wait(ctx); err != nil {
		return err
	}
	took := time.Since(started)

	meanRank := float32(size-1) / 2
	for i, got := range gradient {
		if want := meanRank + float32(i%7); math.Abs(float64(got-want)) > 1e-5 {
			return fmt.Errorf("rank %d: element %d is %v, expected %v", rank, i, got, want)
		}
	}

	steps := []int64{int64(rank + 1)}
	if err := comm.AllReduce(world, steps, steps, comm.Sum); err != nil {
		return err
	}
	if rank == 0 {
		fmt.Printf("averaged %d floats over %d ranks in %v; sum of 1..%d = %d (comm %s)\n",
			len(gradient), size, took.Round(time.Microsecond), size, steps[0], comm.Version())
	}
	return nil
}
