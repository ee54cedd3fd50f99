// Command comm-go-bench measures the Go binding against the C library on
// the same job: per-call time of a blocking 8-byte all_reduce and the
// bandwidth (bytes per second of one rank's buffer) of a 64 MiB one, best
// of several rounds. -impl=c runs the same loop in C (through cgo, with its
// own comm_init), -impl=go through package comm; run both under commrun:
//
//	commrun -n 2 comm-go-bench -impl=c
//	commrun -n 2 comm-go-bench -impl=go
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"libcomm.org/comm"
)

// loop runs calls blocking all_reduces (sum) of count float32 and returns
// the seconds per call.
type loop interface {
	allReduce(count, calls int) (float64, error)
	rank() int
	close()
}

func main() {
	impl := flag.String("impl", "go", "go: package comm; c: the C library called from C")
	rounds := flag.Int("rounds", 7, "rounds per size; the best is reported")
	flag.Parse()
	var l loop
	var err error
	switch *impl {
	case "go":
		l, err = newGoLoop()
	case "c":
		l, err = newCLoop()
	default:
		err = fmt.Errorf("unknown -impl %q", *impl)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "comm-go-bench:", err)
		os.Exit(1)
	}
	defer l.close()
	for _, size := range []struct{ count, calls int }{{2, 20000}, {16 << 20, 5}} {
		best := 0.0
		for round := -1; round < *rounds; round++ { // round -1 warms up
			seconds, err := l.allReduce(size.count, size.calls)
			if err != nil {
				fmt.Fprintln(os.Stderr, "comm-go-bench:", err)
				os.Exit(1)
			}
			if round >= 0 && (best == 0 || seconds < best) {
				best = seconds
			}
		}
		if l.rank() == 0 {
			bytes := size.count * 4
			fmt.Printf("impl=%s all_reduce bytes=%d time_per_call_us=%.2f bandwidth_GBps=%.3f\n",
				*impl, bytes, best*1e6, float64(bytes)/best/1e9)
		}
	}
}

type goLoop struct{ world *comm.Communicator }

func newGoLoop() (*goLoop, error) {
	world, err := comm.Init()
	return &goLoop{world}, err
}

func (l *goLoop) allReduce(count, calls int) (float64, error) {
	in, out := make([]float32, count), make([]float32, count)
	for i := range in { // real pages, as in the C loop
		in[i], out[i] = 1, 0
	}
	if err := l.world.Barrier(); err != nil {
		return 0, err
	}
	start := time.Now()
	for i := 0; i < calls; i++ {
		if err := comm.AllReduce(l.world, in, out, comm.Sum); err != nil {
			return 0, err
		}
	}
	return time.Since(start).Seconds() / float64(calls), nil
}

func (l *goLoop) rank() int { return l.world.Rank() }
func (l *goLoop) close()    { l.world.Close() }
