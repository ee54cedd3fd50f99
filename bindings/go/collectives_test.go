package comm_test

import (
	"context"
	"testing"
	"time"

	"libcomm.org/comm"
)

type celsius float64 // a defined type: its kind decides its dtype

func allReduceEveryOp[T comm.Numeric](t *testing.T, name string) {
	for op := comm.Sum; op <= comm.BXor; op++ {
		if isFloat[T]() && op > comm.Avg {
			continue // bitwise ops are for integers and bool
		}
		if isBool[T]() && op == comm.Avg {
			continue // the mean of bools is no bool
		}
		in := filled[T](rank, 15, int(op))
		out := make([]T, len(in))
		must(t, comm.AllReduce(world, in, out, op))
		salt := int(op)
		expectElements(t, name+" "+op.String(), out, func(i int) float64 { return reduced[T](op, i, salt) })
		expectElements(t, name+" input", in, func(i int) float64 { return number(element[T](rank, i, salt)) })
	}
}

func TestAllReduceEveryTypeAndOp(t *testing.T) {
	allReduceEveryOp[int8](t, "int8")
	allReduceEveryOp[uint8](t, "uint8")
	allReduceEveryOp[int16](t, "int16")
	allReduceEveryOp[uint16](t, "uint16")
	allReduceEveryOp[int32](t, "int32")
	allReduceEveryOp[uint32](t, "uint32")
	allReduceEveryOp[int64](t, "int64")
	allReduceEveryOp[uint64](t, "uint64")
	allReduceEveryOp[int](t, "int")
	allReduceEveryOp[uint](t, "uint")
	allReduceEveryOp[float32](t, "float32")
	allReduceEveryOp[float64](t, "float64")
	allReduceEveryOp[bool](t, "bool")
	allReduceEveryOp[comm.Float16](t, "float16")
	allReduceEveryOp[comm.BFloat16](t, "bfloat16")
	allReduceEveryOp[celsius](t, "celsius")
}

func TestAllReduceInPlaceAsyncOnALargeSlice(t *testing.T) {
	data := filled[float32](rank, 1<<20+3, 0)
	h, err := comm.AllReduceAsync(world, data, data, comm.Sum)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must(t, h.Wait(ctx))
	must(t, h.Wait(ctx)) // again: the same outcome
	if done, err := h.Test(); !done || err != nil {
		t.Fatalf("Test after Wait: %v, %v", done, err)
	}
	must(t, h.Close())
	expectElements(t, "in place", data, func(i int) float64 { return reduced[float32](comm.Sum, i, 0) })
}

// code is what row `row` of rank `from`'s data holds.
func code(from, row int) int64 { return int64(from*1000 + row) }

// coded is rank from's data: rows first..first+n-1.
func coded(from, first, n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = code(from, first+i)
	}
	return s
}

func expectCodes(t *testing.T, what string, got []int64, want func(i int) int64) {
	t.Helper()
	for i, x := range got {
		if w := want(i); x != w {
			t.Fatalf("%s: element %d is %d, want %d", what, i, x, w)
		}
	}
}

func sum(counts []int, end int) int {
	total := 0
	for _, c := range counts[:end] {
		total += c
	}
	return total
}

// uneven is 1, 2, ... size.
func uneven() []int {
	counts := make([]int, size)
	for r := range counts {
		counts[r] = r + 1
	}
	return counts
}

func TestReduceToEveryRoot(t *testing.T) {
	for root := 0; root < size; root++ {
		in := filled[float64](rank, 8, root)
		var out []float64
		if rank == root {
			out = make([]float64, 8)
		}
		if root%2 == 0 {
			must(t, comm.Reduce(world, in, out, comm.Prod, root))
		} else {
			h, err := comm.ReduceAsync(world, in, out, comm.Prod, root)
			must(t, err)
			must(t, h.Wait(context.Background()))
		}
		if rank == root {
			salt := root
			expectElements(t, "reduce", out, func(i int) float64 { return reduced[float64](comm.Prod, i, salt) })
		}
	}
}

func TestBroadcastFromEveryRoot(t *testing.T) {
	for root := 0; root < size; root++ {
		data := make([]int64, 6)
		if rank == root {
			data = coded(root, 0, 6)
		}
		if root%2 == 0 {
			must(t, comm.Broadcast(world, data, root))
		} else {
			h, err := comm.BroadcastAsync(world, data, root)
			must(t, err)
			must(t, h.Wait(context.Background()))
		}
		from := root
		expectCodes(t, "broadcast", data, func(i int) int64 { return code(from, i) })
	}
}

func TestAllGatherInRankOrder(t *testing.T) {
	in := coded(rank, 0, 3)
	out := make([]int64, 3*size)
	must(t, comm.AllGather(world, in, out))
	expectCodes(t, "allgather", out, func(i int) int64 { return code(i/3, i%3) })
	async := make([]int64, 3*size)
	h, err := comm.AllGatherAsync(world, in, async)
	must(t, err)
	must(t, h.Wait(context.Background()))
	expectCodes(t, "async", async, func(i int) int64 { return code(i/3, i%3) })
}

func TestAllGatherVUneven(t *testing.T) {
	counts := uneven()
	in := coded(rank, 0, counts[rank])
	for _, async := range []bool{false, true} {
		out := make([]int64, sum(counts, size))
		if async {
			h, err := comm.AllGatherVAsync(world, in, out, counts)
			must(t, err)
			must(t, h.Wait(context.Background()))
		} else {
			must(t, comm.AllGatherV(world, in, out, counts))
		}
		for from := 0; from < size; from++ {
			expectCodes(t, "allgatherv", out[sum(counts, from):sum(counts, from+1)],
				func(i int) int64 { return code(from, i) })
		}
	}
}

func TestReduceScatterEqualBlocks(t *testing.T) {
	in := filled[int32](rank, 4*size, 2)
	out := make([]int32, 4)
	must(t, comm.ReduceScatter(world, in, out, comm.Sum))
	expectElements(t, "reducescatter", out, func(i int) float64 { return reduced[int32](comm.Sum, 4*rank+i, 2) })
	h, err := comm.ReduceScatterAsync(world, in, out, comm.Max)
	must(t, err)
	must(t, h.Wait(context.Background()))
	expectElements(t, "async", out, func(i int) float64 { return reduced[int32](comm.Max, 4*rank+i, 2) })
}

func TestReduceScatterVUneven(t *testing.T) {
	counts := uneven()
	in := filled[uint16](rank, sum(counts, size), 3)
	out := make([]uint16, counts[rank])
	first := sum(counts, rank)
	must(t, comm.ReduceScatterV(world, in, out, counts, comm.Sum))
	expectElements(t, "reducescatterv", out, func(i int) float64 { return reduced[uint16](comm.Sum, first+i, 3) })
	h, err := comm.ReduceScatterVAsync(world, in, out, counts, comm.Min)
	must(t, err)
	must(t, h.Wait(context.Background()))
	expectElements(t, "async", out, func(i int) float64 { return reduced[uint16](comm.Min, first+i, 3) })
}

func TestGatherToEveryRoot(t *testing.T) {
	for root := 0; root < size; root++ {
		in := coded(rank, 0, 2)
		var out []int64
		if rank == root {
			out = make([]int64, 2*size)
		}
		if root%2 == 0 {
			must(t, comm.Gather(world, in, out, root))
		} else {
			h, err := comm.GatherAsync(world, in, out, root)
			must(t, err)
			must(t, h.Wait(context.Background()))
		}
		expectCodes(t, "gather", out, func(i int) int64 { return code(i/2, i%2) })
	}
}

func TestGatherVUneven(t *testing.T) {
	counts := uneven()
	root := size - 1
	in := coded(rank, 0, counts[rank])
	var out, async []int64
	if rank == root {
		out, async = make([]int64, sum(counts, size)), make([]int64, sum(counts, size))
	}
	must(t, comm.GatherV(world, in, out, counts, root))
	h, err := comm.GatherVAsync(world, in, async, counts, root)
	must(t, err)
	must(t, h.Wait(context.Background()))
	if rank == root {
		for from := 0; from < size; from++ {
			expectCodes(t, "gatherv", out[sum(counts, from):sum(counts, from+1)], func(i int) int64 { return code(from, i) })
			expectCodes(t, "async", async[sum(counts, from):sum(counts, from+1)], func(i int) int64 { return code(from, i) })
		}
	}
}

func TestScatterFromEveryRoot(t *testing.T) {
	for root := 0; root < size; root++ {
		var in []int64
		if rank == root {
			in = coded(root, 0, 3*size)
		}
		out := make([]int64, 3)
		if root%2 == 0 {
			must(t, comm.Scatter(world, in, out, root))
		} else {
			h, err := comm.ScatterAsync(world, in, out, root)
			must(t, err)
			must(t, h.Wait(context.Background()))
		}
		from := root
		expectCodes(t, "scatter", out, func(i int) int64 { return code(from, 3*rank+i) })
	}
}

func TestScatterVUneven(t *testing.T) {
	counts := uneven()
	var in []int64
	if rank == 0 {
		in = coded(0, 0, sum(counts, size))
	}
	out := make([]int64, counts[rank])
	must(t, comm.ScatterV(world, in, out, counts, 0))
	expectCodes(t, "scatterv", out, func(i int) int64 { return code(0, sum(counts, rank)+i) })
	async := make([]int64, counts[rank])
	h, err := comm.ScatterVAsync(world, in, async, counts, 0)
	must(t, err)
	must(t, h.Wait(context.Background()))
	expectCodes(t, "async", async, func(i int) int64 { return code(0, sum(counts, rank)+i) })
}

func TestAllToAllSingleEvenAndUneven(t *testing.T) {
	in := coded(rank, 0, 2*size)
	out := make([]int64, 2*size)
	must(t, comm.AllToAllSingle(world, in, out, nil, nil))
	expectCodes(t, "even", out, func(i int) int64 { return code(i/2, 2*rank+i%2) })

	// Rank r sends p+1 elements to rank p, so it receives rank+1 from each.
	inSplits := uneven()
	outSplits := make([]int, size)
	for p := range outSplits {
		outSplits[p] = rank + 1
	}
	unevenIn := coded(rank, 0, sum(inSplits, size))
	unevenOut := make([]int64, (rank+1)*size)
	h, err := comm.AllToAllSingleAsync(world, unevenIn, unevenOut, outSplits, inSplits)
	must(t, err)
	must(t, h.Wait(context.Background()))
	mine := sum(inSplits, rank)
	expectCodes(t, "uneven", unevenOut, func(i int) int64 { return code(i/(rank+1), mine+i%(rank+1)) })
}

func TestAllToAllOfAnyLengths(t *testing.T) {
	ins, outs := make([][]int64, size), make([][]int64, size)
	for p := range ins {
		ins[p] = coded(rank, 100*p, p+1) // p+1 elements for rank p
		outs[p] = make([]int64, rank+1)
	}
	must(t, comm.AllToAll(world, ins, outs))
	for p := range outs {
		from := p
		expectCodes(t, "alltoall", outs[p], func(i int) int64 { return code(from, 100*rank+i) })
		outs[p] = make([]int64, rank+1)
	}
	h, err := comm.AllToAllAsync(world, ins, outs)
	must(t, err)
	must(t, h.Wait(context.Background()))
	for p := range outs {
		from := p
		expectCodes(t, "async", outs[p], func(i int) int64 { return code(from, 100*rank+i) })
	}
}

func TestBarrier(t *testing.T) {
	must(t, world.Barrier())
	h, err := world.BarrierAsync()
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(t, h.Wait(ctx))
	must(t, h.Close())
	must(t, h.Close())
}
