package comm

import (
	"fmt"

	"libcomm.org/comm/internal/capi"
)

// Status says why a call failed: the error values of the C library's
// comm_status_t.
type Status int

// The statuses (the C library's COMM_ERR_* values).
const (
	StatusInvalidArgument Status = -1  // a nil, out-of-range or inconsistent argument
	StatusInvalidUsage    Status = -2  // a call in the wrong state: a closed Communicator or Handle...
	StatusNotSupported    Status = -3  // valid, but not available in this build or for this type and op
	StatusNoMemory        Status = -4  // out of memory
	StatusTimeout         Status = -5  // a deadline passed; the message names what was awaited
	StatusRemote          Status = -6  // a peer died or reported a failure; the message names it
	StatusMismatch        Status = -7  // ranks called different collectives or passed different arguments
	StatusAborted         Status = -8  // the communicator was aborted
	StatusTransport       Status = -9  // the fabric failed
	StatusBootstrap       Status = -10 // rendezvous or the launcher's environment failed
	StatusInternal        Status = -11 // a bug in comm; please report the message
	StatusRevoked         Status = -12 // the communicator was revoked; the message names the rank
)

// String is the C library's short description of the status.
func (s Status) String() string {
	return capi.Comm_status_string(capi.Enum_SS_comm_status(s))
}

// Error is a failed call: its status and the C library's message, which
// names the call, the object and the cause (or, for mistakes caught in Go,
// a message naming the Go function).
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "comm: " + e.Status.String()
	}
	return e.Message
}

// Is reports whether target is an *Error of the same status, so that
// errors.Is(err, comm.ErrTimeout) holds for every timeout.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// Sentinels for errors.Is, one per status.
var (
	ErrInvalidArgument = &Error{Status: StatusInvalidArgument}
	ErrInvalidUsage    = &Error{Status: StatusInvalidUsage}
	ErrNotSupported    = &Error{Status: StatusNotSupported}
	ErrNoMemory        = &Error{Status: StatusNoMemory}
	ErrTimeout         = &Error{Status: StatusTimeout}
	ErrRemote          = &Error{Status: StatusRemote}
	ErrMismatch        = &Error{Status: StatusMismatch}
	ErrAborted         = &Error{Status: StatusAborted}
	ErrTransport       = &Error{Status: StatusTransport}
	ErrBootstrap       = &Error{Status: StatusBootstrap}
	ErrInternal        = &Error{Status: StatusInternal}
	ErrRevoked         = &Error{Status: StatusRevoked}
)

// argumentError is a mistake caught in Go, reported like the C library's.
func argumentError(call, format string, args ...any) error {
	return &Error{Status: StatusInvalidArgument, Message: call + ": " + fmt.Sprintf(format, args...)}
}

func usageError(call, format string, args ...any) error {
	return &Error{Status: StatusInvalidUsage, Message: call + ": " + fmt.Sprintf(format, args...)}
}
