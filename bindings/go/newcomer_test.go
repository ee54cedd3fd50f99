package comm_test

// A newcomer for the grow tests: rank 0 starts this test binary again with
// newcomerRole in its environment; TestMain then runs newcomer instead of
// the tests. It joins the communicator the job's ranks grow and makes the
// checks they make (checkGrown).

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"libcomm.org/comm"
)

// newcomerRole names, in a newcomer's environment, how it joins:
// "environment" (COMM_JOIN=1) or "setting" (comm.WithSetting("join", "1")).
const newcomerRole = "COMM_GO_TEST_NEWCOMER"

const grownStateLength = 4099

// newcomer is a newcomer's life; it returns the process's exit status.
func newcomer(role string) int {
	var options []comm.Option
	if role == "setting" {
		options = append(options, comm.WithSetting("join", "1"))
	}
	grown, err := comm.Init(options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "newcomer: comm.Init:", err)
		return 1
	}
	failed := checkGrown(grown, grown.Size()-1)
	if grown.Rank() != grown.Size()-1 {
		failed = append(failed, fmt.Sprintf("the newcomer has rank %d of %d, not the last", grown.Rank(), grown.Size()))
	}
	verdict := "ok"
	if len(failed) > 0 {
		verdict = "FAILED: " + strings.Join(failed, "; ")
	}
	fmt.Printf("newcomer, rank %d of %d: %s\n", grown.Rank(), grown.Size(), verdict)
	if err := grown.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "newcomer: Close:", err)
		return 1
	}
	if len(failed) > 0 {
		return 1
	}
	return 0
}

// grownState is what rank 0 broadcasts to the grown communicator; the
// others start from -1.
func grownState(rank int) []int64 {
	state := make([]int64, grownStateLength)
	for i := range state {
		state[i] = -1
		if rank == 0 {
			state[i] = int64(i)*31 + 5
		}
	}
	return state
}

// checkGrown makes the checks every rank of a communicator grown by one
// newcomer makes, the newcomer too, in the same order (each is a
// collective), and returns the failed ones.
func checkGrown(grown *comm.Communicator, oldSize int) []string {
	var failed []string
	r, n := grown.Rank(), grown.Size()
	if n != oldSize+1 {
		failed = append(failed, fmt.Sprintf("size %d, expected %d", n, oldSize+1))
	}
	// A world of its own: its world ranks are its ranks.
	if w, err := grown.ToWorldRank(n - 1); err != nil || w != n-1 {
		failed = append(failed, fmt.Sprintf("the newcomer's world rank: %d, %v", w, err))
	}
	state := grownState(r)
	if err := comm.Broadcast(grown, state, 0); err != nil {
		failed = append(failed, fmt.Sprint("broadcast: ", err))
	}
	for i, want := range grownState(0) {
		if state[i] != want {
			failed = append(failed, fmt.Sprintf("the broadcast state [%d]: %d, expected %d", i, state[i], want))
			break
		}
	}
	sum := []int64{int64(r)*7 + 1}
	if err := comm.AllReduce(grown, sum, sum, comm.Sum); err != nil {
		failed = append(failed, fmt.Sprint("all_reduce: ", err))
	}
	want := int64(0)
	for i := 0; i < n; i++ {
		want += int64(i)*7 + 1
	}
	if sum[0] != want {
		failed = append(failed, fmt.Sprintf("all_reduce gave %d, expected %d", sum[0], want))
	}
	return failed
}

// startedNewcomer is a newcomer process rank 0 started; nil elsewhere.
type startedNewcomer struct {
	done chan error
}

// startNewcomer starts, on rank 0, this binary as a newcomer joining by
// role, with launch slot slot (no rank of the job has it). One that is
// still running when the test ends is killed.
func startNewcomer(t *testing.T, slot int, role string) *startedNewcomer {
	t.Helper()
	if rank != 0 {
		return nil
	}
	executable, err := os.Executable()
	must(t, err)
	cmd := exec.Command(executable)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	for _, entry := range os.Environ() {
		if !strings.HasPrefix(entry, "COMM_JOIN=") {
			cmd.Env = append(cmd.Env, entry)
		}
	}
	cmd.Env = append(cmd.Env, newcomerRole+"="+role, "COMM_LAUNCH_SLOT="+strconv.Itoa(slot))
	if role == "environment" {
		cmd.Env = append(cmd.Env, "COMM_JOIN=1")
	}
	must(t, cmd.Start())
	started := &startedNewcomer{done: make(chan error, 1)}
	go func() { started.done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case err := <-started.done:
			started.done <- err
		default:
			cmd.Process.Kill()
			<-started.done
		}
	})
	return started
}

// succeeded fails the test unless the newcomer exits 0 within 30 s.
func (n *startedNewcomer) succeeded(t *testing.T) {
	t.Helper()
	if n == nil {
		return
	}
	select {
	case err := <-n.done:
		n.done <- err
		if err != nil {
			t.Fatalf("the newcomer: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the newcomer did not exit within 30 s")
	}
}
