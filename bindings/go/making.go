package comm

import (
	"context"
	"strings"
	"sync"

	"libcomm.org/comm/internal/capi"
)

// Making is a communicator being made without blocking, by InitAsync,
// SplitAsync, GroupAsync, ShrinkAsync or GrowAsync. Wait (or Test
// reporting true) gives the communicator once it is made; before that
// there is none to call. Methods may be called from any goroutine.
//
// The communicator belongs where the blocking call would put it: the world
// for InitAsync (the caller closes it), the parent for SplitAsync and
// GroupAsync, the world for ShrinkAsync and GrowAsync. Closing that owner
// closes its Makings first, which gives up those still running.
type Making struct {
	owner  *Communicator // nil for InitAsync
	handle *Handle

	mu   sync.Mutex // guards the three fields below, and ptr's abort
	ptr  uintptr    // the communicator being made; 0 for none or once settled
	made *Communicator
	err  error
	done bool
}

// InitAsync is Init without blocking: it returns at once, and the
// Making's Wait gives the world once every rank has joined. Abort gives up
// joining.
func InitAsync(options ...Option) (*Making, error) {
	settings, err := initSettings("comm.InitAsync", options)
	if err != nil {
		return nil, err
	}
	var ptr, handle uintptr
	err = locked(func() error {
		return withConfig(settings, func(config uintptr) error {
			return check(capi.Comm_init_async(&ptr, config, &handle))
		})
	})
	if err != nil {
		return nil, err
	}
	return newMaking(nil, "comm.InitAsync", ptr, handle), nil
}

// SplitAsync is Split without blocking: Wait gives the new communicator
// (nil for color Undefined). Operations on c may run meanwhile, but not
// another making from c (ErrInvalidUsage): wait for the first.
func (c *Communicator) SplitAsync(color, key int, name string) (*Making, error) {
	if err := checkColor("comm.SplitAsync", color); err != nil {
		return nil, err
	}
	return c.startMaking(c, "comm.SplitAsync", name,
		func(ptr uintptr, out, handle *uintptr, cname string) capi.Enum_SS_comm_status {
			return capi.Comm_split_async(out, ptr, color, key, cname, handle)
		})
}

// GroupAsync is Group without blocking: Wait gives the new communicator.
// Operations on c may run meanwhile, but not another making from c.
func (c *Communicator) GroupAsync(ranks []int, name string) (*Making, error) {
	cranks, err := c.groupRanks("comm.GroupAsync", ranks)
	if err != nil {
		return nil, err
	}
	return c.startMaking(c, "comm.GroupAsync", name,
		func(ptr uintptr, out, handle *uintptr, cname string) capi.Enum_SS_comm_status {
			return capi.Comm_group_create_async(out, ptr, len(ranks), &cranks[0], cname, handle)
		})
}

// ShrinkAsync is Shrink without blocking: Wait gives the new communicator,
// which belongs to the world as Shrink's does. Operations on c may run
// meanwhile, but not another making from c.
func (c *Communicator) ShrinkAsync(name string) (*Making, error) {
	world := c.world()
	if world != c {
		// Held before c's, as the world's Close takes them.
		world.mu.RLock()
		defer world.mu.RUnlock()
	}
	return c.startMaking(world, "comm.ShrinkAsync", name,
		func(ptr uintptr, out, handle *uintptr, cname string) capi.Enum_SS_comm_status {
			return capi.Comm_shrink_async(out, ptr, cname, handle)
		})
}

// GrowAsync is Grow without blocking: Wait gives the new communicator,
// which belongs to the world as Grow's does; the newcomers may start after
// it returns. Operations on c may run meanwhile, but not another making
// from c.
func (c *Communicator) GrowAsync(count int, name string) (*Making, error) {
	if err := checkGrowCount("comm.GrowAsync", count); err != nil {
		return nil, err
	}
	world := c.world()
	if world != c {
		// Held before c's, as the world's Close takes them.
		world.mu.RLock()
		defer world.mu.RUnlock()
	}
	return c.startMaking(world, "comm.GrowAsync", name,
		func(ptr uintptr, out, handle *uintptr, cname string) capi.Enum_SS_comm_status {
			return capi.Comm_grow_async(out, ptr, count, cname, handle)
		})
}

// startMaking starts f on c and registers the Making with owner.
func (c *Communicator) startMaking(owner *Communicator, call, name string,
	f func(ptr uintptr, out, handle *uintptr, cname string) capi.Enum_SS_comm_status) (*Making, error) {
	if strings.ContainsRune(name, 0) {
		return nil, argumentError(call, "name %q holds a NUL character", name)
	}
	var m *Making
	err := c.do(call, func(ptr uintptr) error {
		var out, handle uintptr
		if err := check(f(ptr, &out, &handle, name)); err != nil {
			return err
		}
		m = newMaking(owner, call, out, handle)
		owner.ownedMu.Lock()
		owner.makings[m] = struct{}{}
		owner.ownedMu.Unlock()
		return nil
	})
	return m, err
}

func newMaking(owner *Communicator, call string, ptr, handle uintptr) *Making {
	return &Making{owner: owner, handle: newHandle(nil, call, handle, nil), ptr: ptr}
}

// Wait returns the communicator once it is made (nil for a split's
// Undefined color), or the making's error: the same on every later call.
// When ctx is done first it returns ctx.Err() and the making goes on. With
// a ctx that is never done the wait lasts at most the configured timeout.
func (m *Making) Wait(ctx context.Context) (*Communicator, error) {
	if m == nil || m.handle == nil {
		return nil, usageError("comm.Making.Wait", "the making is nil")
	}
	err := m.handle.Wait(ctx)
	select {
	case <-m.handle.done:
		return m.settle(m.handle.err) // also when Close released the handle meanwhile
	default:
		return nil, err // ctx ended this wait
	}
}

// Test reports whether the making has completed, and its error if it
// failed, without waiting; Wait then gives the communicator at once.
func (m *Making) Test() (bool, error) {
	if m == nil || m.handle == nil {
		return false, usageError("comm.Making.Test", "the making is nil")
	}
	done, err := m.handle.Test()
	select {
	case <-m.handle.done:
		_, err = m.settle(m.handle.err) // also when Close released the handle meanwhile
		return true, err
	default:
		return done, err
	}
}

// Abort gives up a making still running: Wait then returns ErrAborted at
// once. It does nothing once the making has completed.
func (m *Making) Abort() error {
	if m == nil {
		return usageError("comm.Making.Abort", "the making is nil")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done || m.ptr == 0 {
		return nil
	}
	return locked(func() error { return check(capi.Comm_abort(m.ptr)) })
}

// Close gives up the making if it still runs (as Abort) and releases it.
// A communicator it made stays open: it belongs to its owner. Closing
// again does nothing; Wait and Test then report what the making came to
// (ErrAborted when Close gave it up).
func (m *Making) Close() error {
	if m == nil {
		return nil
	}
	m.Abort()
	m.handle.Close()
	m.settle(m.handle.err)
	return nil
}

func (m *Making) String() string {
	if m == nil || m.handle == nil {
		return "comm.Making(nil)"
	}
	return "comm.Making(" + m.handle.call + ")"
}

// settle wraps the made communicator, or frees what the failed making left,
// once; err is the handle's outcome.
func (m *Making) settle(err error) (*Communicator, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return m.made, m.err
	}
	m.done = true
	ptr := m.ptr
	m.ptr = 0
	if err == nil && ptr != 0 {
		m.made, err = wrap(ptr, m.owner) // wrap destroys ptr when it fails
		if err == nil && m.owner != nil {
			m.owner.ownedMu.Lock()
			m.owner.children[m.made] = struct{}{}
			m.owner.ownedMu.Unlock()
		}
	} else if ptr != 0 {
		locked(func() error { return check(capi.Comm_destroy(ptr)) })
	}
	m.err = err
	if m.owner != nil {
		m.owner.ownedMu.Lock()
		delete(m.owner.makings, m)
		m.owner.ownedMu.Unlock()
	}
	return m.made, m.err
}
