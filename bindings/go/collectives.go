package comm

import "libcomm.org/comm/internal/capi"

// Every collective must be called by every rank of c, in the same order,
// with matching arguments. Each has a blocking form and an Async form whose
// slices must stay untouched until the returned Handle completes.

// AllReduce sets out to op over in of every rank. out may be in (in place);
// both have the same length.
func AllReduce[T Numeric](c *Communicator, in, out []T, op Op) error {
	_, err := allReduce(c, in, out, op, false)
	return err
}

// AllReduceAsync starts an AllReduce.
func AllReduceAsync[T Numeric](c *Communicator, in, out []T, op Op) (*Handle, error) {
	return allReduce(c, in, out, op, true)
}

func allReduce[T Numeric](c *Communicator, in, out []T, op Op, async bool) (*Handle, error) {
	const call = "comm.AllReduce"
	if len(out) != len(in) {
		return nil, argumentError(call, "in has %d elements but out %d", len(in), len(out))
	}
	i, o := viewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_all_reduce(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, capi.Enum_SS_comm_op(op), h))
	})
}

// Reduce is AllReduce with the result on root only: out (as long as in) may
// be nil elsewhere.
func Reduce[T Numeric](c *Communicator, in, out []T, op Op, root int) error {
	_, err := reduce(c, in, out, op, root, false)
	return err
}

// ReduceAsync starts a Reduce.
func ReduceAsync[T Numeric](c *Communicator, in, out []T, op Op, root int) (*Handle, error) {
	return reduce(c, in, out, op, root, true)
}

func reduce[T Numeric](c *Communicator, in, out []T, op Op, root int, async bool) (*Handle, error) {
	const call = "comm.Reduce"
	if err := c.checkRank(call, "root", root); err != nil {
		return nil, err
	}
	if c.Rank() == root && len(out) != len(in) {
		return nil, argumentError(call, "in has %d elements but the root's out %d", len(in), len(out))
	}
	i, o := viewOf(in), optionalViewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_reduce(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, capi.Enum_SS_comm_op(op), root, h))
	})
}

// Broadcast copies data of root into data of every rank.
func Broadcast[T Numeric](c *Communicator, data []T, root int) error {
	_, err := broadcast(c, data, root, false)
	return err
}

// BroadcastAsync starts a Broadcast.
func BroadcastAsync[T Numeric](c *Communicator, data []T, root int) (*Handle, error) {
	return broadcast(c, data, root, true)
}

func broadcast[T Numeric](c *Communicator, data []T, root int, async bool) (*Handle, error) {
	const call = "comm.Broadcast"
	if err := c.checkRank(call, "root", root); err != nil {
		return nil, err
	}
	o := viewOf(data)
	i := view{dtype: o.dtype} // in is read on the root only: NULL elsewhere
	if c.Rank() == root {
		i = o
	}
	return c.run(call, async, []view{o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_broadcast(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), o.dtype, root, h))
	})
}

// AllGather concatenates in of every rank, in rank order, into out (Size
// times as long as in).
func AllGather[T Numeric](c *Communicator, in, out []T) error {
	_, err := allGather(c, in, out, false)
	return err
}

// AllGatherAsync starts an AllGather.
func AllGatherAsync[T Numeric](c *Communicator, in, out []T) (*Handle, error) {
	return allGather(c, in, out, true)
}

func allGather[T Numeric](c *Communicator, in, out []T, async bool) (*Handle, error) {
	const call = "comm.AllGather"
	if len(out) != len(in)*c.Size() {
		return nil, argumentError(call, "out has %d elements, not %d x %d", len(out), c.Size(), len(in))
	}
	i, o := viewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_all_gather(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, h))
	})
}

// AllGatherV is an uneven AllGather: rank r contributes counts[r] elements
// (counts is the same on every rank); out has sum(counts) elements.
func AllGatherV[T Numeric](c *Communicator, in, out []T, counts []int) error {
	_, err := allGatherV(c, in, out, counts, false)
	return err
}

// AllGatherVAsync starts an AllGatherV.
func AllGatherVAsync[T Numeric](c *Communicator, in, out []T, counts []int) (*Handle, error) {
	return allGatherV(c, in, out, counts, true)
}

func allGatherV[T Numeric](c *Communicator, in, out []T, counts []int, async bool) (*Handle, error) {
	const call = "comm.AllGatherV"
	rows, err := c.checkCounts(call, "counts", counts)
	if err != nil {
		return nil, err
	}
	i, o := viewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_all_gather_v(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, &rows[0], h))
	})
}

// ReduceScatter reduces in (Size times as long as out) over every rank with
// op and gives rank r the r-th of Size equal blocks in out.
func ReduceScatter[T Numeric](c *Communicator, in, out []T, op Op) error {
	_, err := reduceScatter(c, in, out, op, false)
	return err
}

// ReduceScatterAsync starts a ReduceScatter.
func ReduceScatterAsync[T Numeric](c *Communicator, in, out []T, op Op) (*Handle, error) {
	return reduceScatter(c, in, out, op, true)
}

func reduceScatter[T Numeric](c *Communicator, in, out []T, op Op, async bool) (*Handle, error) {
	const call = "comm.ReduceScatter"
	if len(in) != len(out)*c.Size() {
		return nil, argumentError(call, "in has %d elements, not %d x %d", len(in), c.Size(), len(out))
	}
	i, o := viewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_reduce_scatter(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, capi.Enum_SS_comm_op(op), h))
	})
}

// ReduceScatterV is an uneven ReduceScatter: in has sum(counts) elements and
// rank r gets counts[r] of them, reduced, in out.
func ReduceScatterV[T Numeric](c *Communicator, in, out []T, counts []int, op Op) error {
	_, err := reduceScatterV(c, in, out, counts, op, false)
	return err
}

// ReduceScatterVAsync starts a ReduceScatterV.
func ReduceScatterVAsync[T Numeric](c *Communicator, in, out []T, counts []int, op Op) (*Handle, error) {
	return reduceScatterV(c, in, out, counts, op, true)
}

func reduceScatterV[T Numeric](c *Communicator, in, out []T, counts []int, op Op, async bool) (*Handle, error) {
	const call = "comm.ReduceScatterV"
	rows, err := c.checkCounts(call, "counts", counts)
	if err != nil {
		return nil, err
	}
	i, o := viewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_reduce_scatter_v(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, &rows[0], capi.Enum_SS_comm_op(op), h))
	})
}

// Gather concatenates in of every rank, in rank order, into out on root
// (Size times as long as in; nil elsewhere).
func Gather[T Numeric](c *Communicator, in, out []T, root int) error {
	_, err := gather(c, in, out, root, false)
	return err
}

// GatherAsync starts a Gather.
func GatherAsync[T Numeric](c *Communicator, in, out []T, root int) (*Handle, error) {
	return gather(c, in, out, root, true)
}

func gather[T Numeric](c *Communicator, in, out []T, root int, async bool) (*Handle, error) {
	const call = "comm.Gather"
	if err := c.checkRank(call, "root", root); err != nil {
		return nil, err
	}
	if c.Rank() == root && len(out) != len(in)*c.Size() {
		return nil, argumentError(call, "the root's out has %d elements, not %d x %d", len(out), c.Size(), len(in))
	}
	i, o := viewOf(in), optionalViewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_gather(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, root, h))
	})
}

// GatherV is an uneven Gather: rank r contributes counts[r] elements to out
// on root (sum(counts) elements; nil elsewhere).
func GatherV[T Numeric](c *Communicator, in, out []T, counts []int, root int) error {
	_, err := gatherV(c, in, out, counts, root, false)
	return err
}

// GatherVAsync starts a GatherV.
func GatherVAsync[T Numeric](c *Communicator, in, out []T, counts []int, root int) (*Handle, error) {
	return gatherV(c, in, out, counts, root, true)
}

func gatherV[T Numeric](c *Communicator, in, out []T, counts []int, root int, async bool) (*Handle, error) {
	const call = "comm.GatherV"
	if err := c.checkRank(call, "root", root); err != nil {
		return nil, err
	}
	rows, err := c.checkCounts(call, "counts", counts)
	if err != nil {
		return nil, err
	}
	i, o := viewOf(in), optionalViewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_gather_v(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, &rows[0], root, h))
	})
}

// Scatter splits in on root (Size times as long as out; nil elsewhere) into
// Size equal blocks and gives rank r block r in out.
func Scatter[T Numeric](c *Communicator, in, out []T, root int) error {
	_, err := scatter(c, in, out, root, false)
	return err
}

// ScatterAsync starts a Scatter.
func ScatterAsync[T Numeric](c *Communicator, in, out []T, root int) (*Handle, error) {
	return scatter(c, in, out, root, true)
}

func scatter[T Numeric](c *Communicator, in, out []T, root int, async bool) (*Handle, error) {
	const call = "comm.Scatter"
	if err := c.checkRank(call, "root", root); err != nil {
		return nil, err
	}
	if c.Rank() == root && len(in) != len(out)*c.Size() {
		return nil, argumentError(call, "the root's in has %d elements, not %d x %d", len(in), c.Size(), len(out))
	}
	i, o := optionalViewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_scatter(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, root, h))
	})
}

// ScatterV is an uneven Scatter: rank r receives counts[r] elements of in
// on root (sum(counts) elements; nil elsewhere).
func ScatterV[T Numeric](c *Communicator, in, out []T, counts []int, root int) error {
	_, err := scatterV(c, in, out, counts, root, false)
	return err
}

// ScatterVAsync starts a ScatterV.
func ScatterVAsync[T Numeric](c *Communicator, in, out []T, counts []int, root int) (*Handle, error) {
	return scatterV(c, in, out, counts, root, true)
}

func scatterV[T Numeric](c *Communicator, in, out []T, counts []int, root int, async bool) (*Handle, error) {
	const call = "comm.ScatterV"
	if err := c.checkRank(call, "root", root); err != nil {
		return nil, err
	}
	rows, err := c.checkCounts(call, "counts", counts)
	if err != nil {
		return nil, err
	}
	i, o := optionalViewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_scatter_v(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, &rows[0], root, h))
	})
}

// AllToAllSingle sends elements [sum(inSplits[:p]), +inSplits[p]) of in to
// rank p and receives rank p's into elements [sum(outSplits[:p]),
// +outSplits[p]) of out. A nil split means the slice divided evenly.
func AllToAllSingle[T Numeric](c *Communicator, in, out []T, outSplits, inSplits []int) error {
	_, err := allToAllSingle(c, in, out, outSplits, inSplits, false)
	return err
}

// AllToAllSingleAsync starts an AllToAllSingle.
func AllToAllSingleAsync[T Numeric](c *Communicator, in, out []T, outSplits, inSplits []int) (*Handle, error) {
	return allToAllSingle(c, in, out, outSplits, inSplits, true)
}

func allToAllSingle[T Numeric](c *Communicator, in, out []T, outSplits, inSplits []int, async bool) (*Handle, error) {
	const call = "comm.AllToAllSingle"
	splits := [2]*int64{}
	for i, s := range [2][]int{outSplits, inSplits} {
		if s == nil {
			continue
		}
		rows, err := c.checkCounts(call, [2]string{"outSplits", "inSplits"}[i], s)
		if err != nil {
			return nil, err
		}
		splits[i] = &rows[0]
	}
	i, o := viewOf(in), viewOf(out)
	return c.run(call, async, []view{i, o}, func(ptr uintptr, h *uintptr) error {
		return check(capi.Comm_go_all_to_all_single(ptr, i.data, i.count, i.flag(), o.data, o.count, o.flag(), i.dtype, splits[0], splits[1], h))
	})
}

// AllToAll sends ins[p] to rank p and receives outs[p] from rank p: Size
// slices each, of any lengths (a pair's lengths must agree).
func AllToAll[T Numeric](c *Communicator, ins, outs [][]T) error {
	_, err := allToAll(c, ins, outs, false)
	return err
}

// AllToAllAsync starts an AllToAll.
func AllToAllAsync[T Numeric](c *Communicator, ins, outs [][]T) (*Handle, error) {
	return allToAll(c, ins, outs, true)
}

func allToAll[T Numeric](c *Communicator, ins, outs [][]T, async bool) (*Handle, error) {
	const call = "comm.AllToAll"
	size := c.Size()
	if len(ins) != size || len(outs) != size {
		return nil, argumentError(call, "ins has %d slices and outs %d; %q has %d ranks",
			len(ins), len(outs), c.Name(), size)
	}
	views := make([]view, 0, 2*size)
	for _, s := range ins {
		views = append(views, viewOf(s))
	}
	for _, s := range outs {
		views = append(views, viewOf(s))
	}
	return c.run(call, async, views, func(ptr uintptr, h *uintptr) error {
		return withDescriptors(views, func(t []uintptr) error {
			return check(capi.Comm_all_to_all(ptr, size, &t[0], size, &t[size], h))
		})
	})
}
