package comm

import (
	"runtime"

	"libcomm.org/comm/internal/capi"
)

// locked runs f with its goroutine held on one OS thread: comm_last_error()
// is thread-local, so the message of a failed call must be read on the
// thread that made it, before the scheduler can move the goroutine.
func locked(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return f()
}

// check turns a status into an *Error with the C message; only call it
// inside locked, right after the call that returned status.
func check(status capi.Enum_SS_comm_status) error {
	if status >= 0 {
		return nil
	}
	return &Error{Status: Status(status), Message: capi.Comm_last_error()}
}
