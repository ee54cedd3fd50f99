// Command hello only sees an installed libcomm.org/comm (through the
// replace directive run.sh sets): it sums the ranks and checks the total.
package main

import (
	"fmt"
	"os"

	"libcomm.org/comm"
)

func main() {
	world, err := comm.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer world.Close()
	sum := []int32{int32(world.Rank())}
	if err := comm.AllReduce(world, sum, sum, comm.Sum); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	size := int32(world.Size())
	if sum[0] != size*(size-1)/2 {
		fmt.Fprintf(os.Stderr, "sum of ranks is %d, expected %d\n", sum[0], size*(size-1)/2)
		os.Exit(1)
	}
	fmt.Printf("rank %d of %d: sum of ranks %d\n", world.Rank(), world.Size(), sum[0])
}
