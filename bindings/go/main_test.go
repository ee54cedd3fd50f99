package comm_test

// The tests run under commrun (go.test.n2 and go.test.n4 in CTest), every
// rank running every test in source order, so that collectives match.
// Alone (no COMM_RANK in the environment) they skip.

import (
	"context"
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
	if role := os.Getenv(newcomerRole); role != "" {
		os.Exit(newcomer(role)) // started by a grow test (newcomer_test.go)
	}
	if os.Getenv("COMM_RANK") == "" {
		fmt.Println("comm tests: not under commrun (COMM_RANK unset); skipping")
		os.Exit(0)
	}
	// The tests' world is joined without blocking (the examples use Init).
	joining, err := comm.InitAsync()
	if err == nil {
		world, err = joining.Wait(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "comm.InitAsync:", err)
		os.Exit(1)
	}
	if again, err := joining.Wait(context.Background()); again != world || err != nil {
		fmt.Fprintln(os.Stderr, "second Wait:", again, err)
		os.Exit(1)
	}
	must0(joining.Close()) // the world is the caller's: it stays open
	rank, size = world.Rank(), world.Size()
	code := m.Run()
	if err := world.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "Close:", err)
		code = 1
	}
	os.Exit(code)
}

func must0(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// must fails the test at once on an error (every rank fails the same way
// in these tests, so no rank is left waiting).
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
