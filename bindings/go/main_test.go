package comm_test

// The tests run under commrun (go.test.n2 and go.test.n4 in CTest), every
// rank running every test in source order, so that collectives match.
// Alone (no COMM_RANK in the environment) they skip.

import (
	"fmt"
	"os"
	"testing"

	"libcomm.org/comm"
)

var (
	world      *comm.Communicator
	rank, size int
)

func TestMain(m *testing.M) {
	if os.Getenv("COMM_RANK") == "" {
		fmt.Println("comm tests: not under commrun (COMM_RANK unset); skipping")
		os.Exit(0)
	}
	var err error
	world, err = comm.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "comm.Init:", err)
		os.Exit(1)
	}
	rank, size = world.Rank(), world.Size()
	code := m.Run()
	if err := world.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "Close:", err)
		code = 1
	}
	os.Exit(code)
}

// must fails the test at once on an error (every rank fails the same way
// in these tests, so no rank is left waiting).
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
