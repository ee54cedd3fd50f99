// Command peerdeath: the last rank dies (os.Exit) while the others wait on
// it; each survivor gets ErrRemote (or ErrTimeout) naming the dead rank,
// then exits 0. Run by CTest under commrun (go.peer_death.n3).
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"libcomm.org/comm"
)

func main() {
	world, err := comm.Init()
	if err != nil {
		fail(err)
	}
	victim := world.Size() - 1
	if err := world.Barrier(); err != nil {
		fail(err)
	}
	if world.Rank() == victim {
		os.Exit(0)
	}
	err = comm.Recv(world, make([]float64, 1), victim, 1)
	if !errors.Is(err, comm.ErrRemote) && !errors.Is(err, comm.ErrTimeout) {
		fail(fmt.Errorf("recv from a dead rank gave %v", err))
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("rank %d", victim)) {
		fail(fmt.Errorf("the message does not name rank %d: %v", victim, err))
	}
	fmt.Printf("survivor %d: %v\n", world.Rank(), err)
	os.Exit(0) // the world cannot be left cleanly without the victim
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "peerdeath:", err)
	os.Exit(1)
}
