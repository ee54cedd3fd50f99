package comm

import (
	"context"
	"sync"

	"libcomm.org/comm/internal/capi"
)

// Handle is an operation started by one of the Async calls. Its output
// slices are filled once Wait returns nil or Test reports true; until then
// the Handle keeps the call's slices alive and they must not be touched.
//
// The first of Wait and Test to see the operation complete releases its C
// handle; later calls report the same outcome. Close waits for a running
// operation, so slices are never written after it returns. Closing the
// Communicator closes its handles. Methods may be called from any goroutine.
type Handle struct {
	owner *Communicator
	call  string

	mu     sync.RWMutex // held shared by every C call on ptr, exclusively to release it
	ptr    uintptr      // 0 once released
	views  []view       // the memory the operation uses; nil once released
	closed bool

	waiter sync.Once     // starts the goroutine that waits for a cancellable Wait
	done   chan struct{} // closed once err holds the outcome
	err    error
}

func newHandle(owner *Communicator, call string, ptr uintptr, views []view) *Handle {
	return &Handle{owner: owner, call: call, ptr: ptr, views: views, done: make(chan struct{})}
}

// Wait returns once the operation completes, with its error (the same one
// on every later call), or once ctx is done, with ctx.Err(): the operation
// then goes on, and Wait may be called again. With a ctx that is never done
// (context.Background()), the wait lasts at most the communicator's timeout.
func (h *Handle) Wait(ctx context.Context) error {
	if err := h.ensureOpen("comm.Handle.Wait"); err != nil {
		return err
	}
	select {
	case <-h.done:
		return h.err
	default:
	}
	if ctx == nil || ctx.Done() == nil {
		h.waitNative()
		<-h.done
		return h.err
	}
	h.waiter.Do(func() { go h.waitNative() })
	select {
	case <-h.done:
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Test reports whether the operation has completed, and its error if it
// failed, without waiting.
func (h *Handle) Test() (bool, error) {
	if err := h.ensureOpen("comm.Handle.Test"); err != nil {
		return false, err
	}
	h.mu.RLock()
	if h.ptr == 0 {
		h.mu.RUnlock()
		<-h.done
		return true, h.err
	}
	running := false
	err := locked(func() error {
		status := capi.Comm_handle_test(h.ptr)
		running = status == capi.COMM_IN_PROGRESS
		return check(status)
	})
	h.mu.RUnlock()
	if running {
		return false, nil
	}
	h.complete(err)
	return true, h.err
}

// Close waits for the operation if it still runs, then releases the
// handle. It does not report the operation's failure (Wait does). Closing
// again does nothing; Wait and Test on a closed Handle give ErrInvalidUsage.
func (h *Handle) Close() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	if h.ptr != 0 {
		// Learn the outcome for anyone blocked in Wait, then release.
		h.err = locked(func() error { return check(capi.Comm_handle_wait(h.ptr, int64(capi.COMM_TIMEOUT_DEFAULT))) })
		h.release()
	}
	return nil
}

func (h *Handle) String() string {
	if h == nil {
		return "comm.Handle(nil)"
	}
	return "comm.Handle(" + h.call + ")"
}

// waitNative waits in C, up to the communicator's timeout, and records the
// outcome; it returns at once when the handle was released already.
func (h *Handle) waitNative() {
	h.mu.RLock()
	if h.ptr == 0 {
		h.mu.RUnlock()
		return
	}
	err := locked(func() error { return check(capi.Comm_handle_wait(h.ptr, int64(capi.COMM_TIMEOUT_DEFAULT))) })
	h.mu.RUnlock()
	h.complete(err)
}

// complete records the outcome a caller saw (the first one wins).
func (h *Handle) complete(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ptr != 0 {
		h.err = err
		h.release()
	}
}

// release destroys the C handle (which waits for the operation) and
// announces the outcome; h.mu is held exclusively.
func (h *Handle) release() {
	ptr := h.ptr
	h.ptr = 0
	h.views = nil
	locked(func() error { return check(capi.Comm_handle_destroy(ptr)) })
	close(h.done)
	h.owner.forgetHandle(h)
}

func (h *Handle) ensureOpen(call string) error {
	if h == nil || h.done == nil {
		return usageError(call, "the handle is nil")
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return usageError(call, "the handle of %s is closed", h.call)
	}
	return nil
}
