// Package comm is the Go binding of comm, a collective-communication
// library: all-reduce, broadcast, gathers, scatters, all-to-all and
// point-to-point messages between the ranks of a job started by commrun
// (or torchrun, msrun, srun, mpirun).
//
//	world, err := comm.Init()
//	if err != nil { ... }
//	defer world.Close()
//	grads := make([]float32, n)
//	err = comm.AllReduce(world, grads, grads, comm.Avg)
//
// Data moves between Go slices of any Numeric element type, in place and
// without copies: the C library reads and writes the slices' memory. Every
// call has a blocking form and an Async form that returns a *Handle at once;
// the slices of an async call must not be touched until its Handle's Wait
// returns (the Handle keeps them alive until then).
//
// Ranks given to and returned by a Communicator's methods are ranks of that
// communicator, as in the C API; ToWorldRank and FromWorldRank translate.
// Element counts of the uneven ("V") calls and splits are counts of slice
// elements.
//
// Errors are *Error values carrying the C library's status and message;
// compare them with errors.Is against ErrTimeout, ErrRemote, ErrMismatch,
// ErrAborted, ErrInvalidArgument and the other sentinels. Nothing in this
// package panics on bad input: a nil or closed Communicator or Handle, a
// wrong length or an out-of-range rank gives an error.
//
// Calls on one Communicator may come from several goroutines; calls that
// communicate are then ordered by who gets there first, which must be the
// same on every rank. Close waits for calls in progress.
package comm
