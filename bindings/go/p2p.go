package comm

import (
	"unsafe"

	"libcomm.org/comm/internal/capi"
)

// Send sends data to rank peer of c with tag (0..TagMax). Messages between
// two ranks with the same tag arrive in order.
func Send[T Numeric](c *Communicator, data []T, peer, tag int) error {
	_, err := pointToPoint(c, "comm.Send", capi.Comm_go_send, data, peer, tag, false)
	return err
}

// SendAsync starts a Send.
func SendAsync[T Numeric](c *Communicator, data []T, peer, tag int) (*Handle, error) {
	return pointToPoint(c, "comm.Send", capi.Comm_go_send, data, peer, tag, true)
}

// Recv receives into data a message from rank peer of c with tag, of
// exactly data's size (ErrMismatch otherwise).
func Recv[T Numeric](c *Communicator, data []T, peer, tag int) error {
	_, err := pointToPoint(c, "comm.Recv", capi.Comm_go_recv, data, peer, tag, false)
	return err
}

// RecvAsync starts a Recv.
func RecvAsync[T Numeric](c *Communicator, data []T, peer, tag int) (*Handle, error) {
	return pointToPoint(c, "comm.Recv", capi.Comm_go_recv, data, peer, tag, true)
}

func pointToPoint[T Numeric](c *Communicator, call string,
	f func(uintptr, unsafe.Pointer, int64, capi.Enum_SS_comm_dtype, int, int, *uintptr) capi.Enum_SS_comm_status,
	data []T, peer, tag int, async bool) (*Handle, error) {
	if err := c.checkRank(call, "peer", peer); err != nil {
		return nil, err
	}
	if err := checkTag(call, tag); err != nil {
		return nil, err
	}
	v := viewOf(data)
	return c.run(call, async, []view{v}, func(ptr uintptr, h *uintptr) error {
		return check(f(ptr, v.data, v.count, v.dtype, peer, tag, h))
	})
}

func checkTag(call string, tag int) error {
	if tag < 0 || tag > TagMax {
		return argumentError(call, "tag %d is outside 0..%d", tag, TagMax)
	}
	return nil
}

// P2POp is one send or receive of a batch (SendOp, RecvOp).
type P2POp struct {
	send      bool
	data      view
	peer, tag int
}

// SendOp is a send of data to rank peer with tag, for Batch.
func SendOp[T Numeric](data []T, peer, tag int) P2POp {
	return P2POp{send: true, data: viewOf(data), peer: peer, tag: tag}
}

// RecvOp is a receive into data from rank peer with tag, for Batch.
func RecvOp[T Numeric](data []T, peer, tag int) P2POp {
	return P2POp{data: viewOf(data), peer: peer, tag: tag}
}

// Batch runs the sends and receives of ops together: they complete without
// deadlock whatever their order and whatever the order of other ranks'
// batches. Operations with the same peer and tag match in order.
func (c *Communicator) Batch(ops ...P2POp) error {
	_, err := c.batch(ops, false)
	return err
}

// BatchAsync starts a Batch.
func (c *Communicator) BatchAsync(ops ...P2POp) (*Handle, error) {
	return c.batch(ops, true)
}

func (c *Communicator) batch(ops []P2POp, async bool) (*Handle, error) {
	const call = "comm.Batch"
	views := make([]view, len(ops))
	for i, op := range ops {
		if err := c.checkRank(call, "peer", op.peer); err != nil {
			return nil, err
		}
		if err := checkTag(call, op.tag); err != nil {
			return nil, err
		}
		if !op.data.present {
			return nil, argumentError(call, "ops[%d] is not a SendOp or RecvOp", i)
		}
		views[i] = op.data
	}
	return c.run(call, async, views, func(ptr uintptr, h *uintptr) error {
		return withDescriptors(views, func(t []uintptr) error {
			var batch uintptr
			if err := check(capi.Comm_batch_create(&batch)); err != nil {
				return err
			}
			defer capi.Comm_batch_destroy(batch)
			for i, op := range ops {
				add := capi.Comm_batch_add_recv
				if op.send {
					add = capi.Comm_batch_add_send
				}
				if err := check(add(batch, t[i], op.peer, op.tag)); err != nil {
					return err
				}
			}
			return check(capi.Comm_batch_start(ptr, batch, h))
		})
	})
}
