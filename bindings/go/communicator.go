package comm

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"libcomm.org/comm/internal/capi"
)

const (
	// Undefined is the color of ranks that join no group in Split
	// (COMM_UNDEFINED, which SWIG makes a variable).
	Undefined = -1
	// TagMax is the largest tag; tags are 0..TagMax.
	TagMax = capi.COMM_TAG_MAX
)

// Communicator is a group of ranks that communicate: the world (Init) or a
// group made from it (Split, Group). Its methods and the package's
// functions may be called from several goroutines; see the package
// documentation for the ordering rule.
type Communicator struct {
	parent                           *Communicator
	rank, size, localRank, localSize int
	name                             string

	// mu is held shared by every C call on ptr and exclusively by Close.
	mu  sync.RWMutex
	ptr uintptr // 0 once closed; written under mu and abortMu
	// abortMu lets Abort skip mu, so that it is not queued behind a Close
	// waiting for the very call the Abort is meant to end.
	abortMu sync.Mutex

	ownedMu  sync.Mutex // guards the three sets below
	handles  map[*Handle]struct{}
	children map[*Communicator]struct{}
	makings  map[*Making]struct{} // communicators being made that will be children
}

// Option adjusts Init.
type Option func(settings map[string]string)

// WithSetting sets a key of the C library's configuration (the keys of
// comm_config_set: "timeout", "provider", "shm", "log_level", ...; see
// comm-info), overriding its COMM_* environment variable. ("join", "1")
// makes Init join a running job as a newcomer, which gets its part of the
// communicator the job's ranks make with Grow.
func WithSetting(key, value string) Option {
	return func(settings map[string]string) { settings[key] = value }
}

// WithTimeout sets the deadline of every wait (whole seconds, at least one).
func WithTimeout(d time.Duration) Option {
	seconds := int64(d / time.Second)
	if seconds < 1 {
		seconds = 1
	}
	return WithSetting("timeout", strconv.FormatInt(seconds, 10))
}

// Init joins the world: every rank calls it once, under commrun (or
// torchrun, msrun, srun, mpirun), and waits for the others up to the
// configured timeout. Settings come from the COMM_* environment and options.
// It first refuses a loaded C library older than this package needs
// (CheckVersion).
func Init(options ...Option) (*Communicator, error) {
	settings, err := initSettings("comm.Init", options)
	if err != nil {
		return nil, err
	}
	var ptr uintptr
	err = locked(func() error {
		return withConfig(settings, func(config uintptr) error { return check(capi.Comm_init(&ptr, config)) })
	})
	if err != nil {
		return nil, err
	}
	return wrap(ptr, nil)
}

// initSettings checks the library's version and gathers Init's options.
func initSettings(call string, options []Option) (map[string]string, error) {
	if err := CheckVersion(); err != nil {
		return nil, err
	}
	settings := map[string]string{}
	for _, option := range options {
		if option != nil {
			option(settings)
		}
	}
	for key, value := range settings {
		if strings.ContainsRune(key, 0) || strings.ContainsRune(value, 0) {
			return nil, argumentError(call, "setting %q holds a NUL character", key)
		}
	}
	return settings, nil
}

// withConfig runs f (inside locked) with a C configuration of settings.
func withConfig(settings map[string]string, f func(config uintptr) error) error {
	var config uintptr
	if err := check(capi.Comm_config_create(&config)); err != nil {
		return err
	}
	defer capi.Comm_config_destroy(config)
	for key, value := range settings {
		if err := check(capi.Comm_config_set(config, key, value)); err != nil {
			return err
		}
	}
	return f(config)
}

// Version is the version of the loaded C library, "MAJOR.MINOR.PATCH".
func Version() string {
	return capi.Comm_version_string()
}

// CheckVersion returns nil when the loaded C library can serve this
// package, which was built against comm.h COMM_VERSION_MAJOR.MINOR: the same
// major version and a minor version at least as new.
func CheckVersion() error {
	return locked(func() error {
		return check(capi.Comm_check_version(capi.COMM_VERSION_MAJOR, capi.COMM_VERSION_MINOR))
	})
}

// wrap makes the Communicator of ptr, reading what never changes once.
func wrap(ptr uintptr, parent *Communicator) (*Communicator, error) {
	c := &Communicator{parent: parent, ptr: ptr, handles: map[*Handle]struct{}{},
		children: map[*Communicator]struct{}{}, makings: map[*Making]struct{}{}}
	err := locked(func() error {
		var rank, size, localRank, localSize int32
		for _, status := range []capi.Enum_SS_comm_status{
			capi.Comm_rank(&rank, ptr), capi.Comm_size(&size, ptr),
			capi.Comm_local_rank(&localRank, ptr), capi.Comm_local_size(&localSize, ptr),
		} {
			if err := check(status); err != nil {
				return err
			}
		}
		c.rank, c.size, c.localRank, c.localSize = int(rank), int(size), int(localRank), int(localSize)
		c.name = capi.Comm_go_name(ptr)
		return nil
	})
	if err != nil {
		capi.Comm_destroy(ptr)
		return nil, err
	}
	return c, nil
}

// Rank is this rank's rank in c.
func (c *Communicator) Rank() int {
	if c == nil {
		return -1
	}
	return c.rank
}

// Size is the number of ranks in c.
func (c *Communicator) Size() int {
	if c == nil {
		return 0
	}
	return c.size
}

// LocalRank is this rank's rank among the ranks of c on its node.
func (c *Communicator) LocalRank() int {
	if c == nil {
		return -1
	}
	return c.localRank
}

// LocalSize is the number of ranks of c on this node.
func (c *Communicator) LocalSize() int {
	if c == nil {
		return 0
	}
	return c.localSize
}

// Name is "world" for the world, else the group's given or generated name.
func (c *Communicator) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

func (c *Communicator) String() string {
	if c == nil {
		return "comm.Communicator(nil)"
	}
	return "comm.Communicator(" + c.name + ", rank " + strconv.Itoa(c.rank) + " of " + strconv.Itoa(c.size) + ")"
}

// ToWorldRank is the world rank of rank rank of c.
func (c *Communicator) ToWorldRank(rank int) (int, error) {
	var out int32
	err := c.do("comm.ToWorldRank", func(ptr uintptr) error {
		return check(capi.Comm_rank_to_world(&out, ptr, rank))
	})
	return int(out), err
}

// FromWorldRank is the rank in c of world rank worldRank, or -1 when it is
// not a member.
func (c *Communicator) FromWorldRank(worldRank int) (int, error) {
	var out int32
	err := c.do("comm.FromWorldRank", func(ptr uintptr) error {
		return check(capi.Comm_rank_from_world(&out, ptr, worldRank))
	})
	return int(out), err
}

// NodeCount is the number of nodes (hosts) c's ranks are on.
func (c *Communicator) NodeCount() (int, error) {
	var out int32
	err := c.do("comm.NodeCount", func(ptr uintptr) error { return check(capi.Comm_node_count(&out, ptr)) })
	return int(out), err
}

// NodeID is this rank's node in c, 0 .. NodeCount()-1; nodes are numbered in
// the order of their lowest rank.
func (c *Communicator) NodeID() (int, error) {
	var out int32
	err := c.do("comm.NodeID", func(ptr uintptr) error { return check(capi.Comm_node_id(&out, ptr)) })
	return int(out), err
}

// Timeout is the deadline of every wait on c.
func (c *Communicator) Timeout() (time.Duration, error) {
	var ms int64
	err := c.do("comm.Timeout", func(ptr uintptr) error { return check(capi.Comm_timeout(&ms, ptr)) })
	return time.Duration(ms) * time.Millisecond, err
}

// SetTimeout sets the deadline of every wait on c (at least a millisecond).
func (c *Communicator) SetTimeout(d time.Duration) error {
	ms := d.Milliseconds()
	if ms <= 0 {
		return argumentError("comm.SetTimeout", "%v is not a positive number of milliseconds", d)
	}
	return c.do("comm.SetTimeout", func(ptr uintptr) error { return check(capi.Comm_set_timeout(ptr, ms)) })
}

// Split makes communicators of c's ranks: ranks passing the same color
// (>= 0) form one, ordered by key then by rank in c. Every rank of c calls
// it; ranks passing Undefined join none and get nil. name may be "" for a
// generated one. Closing c closes the new communicator.
func (c *Communicator) Split(color, key int, name string) (*Communicator, error) {
	const call = "comm.Split"
	if err := checkColor(call, color); err != nil {
		return nil, err
	}
	return c.adopt(call, name, func(ptr uintptr, out *uintptr, cname string) capi.Enum_SS_comm_status {
		return capi.Comm_split(out, ptr, color, key, cname)
	})
}

// SplitByNode makes a communicator of c's ranks on this rank's node, in c's
// rank order. Every rank of c calls it; each gets its own node's. name may be
// "" for a generated one. Closing c closes the new communicator.
func (c *Communicator) SplitByNode(name string) (*Communicator, error) {
	return c.adopt("comm.SplitByNode", name, func(ptr uintptr, out *uintptr, cname string) capi.Enum_SS_comm_status {
		return capi.Comm_split_by_node(out, ptr, cname)
	})
}

// Group makes a communicator of c's ranks ranks (distinct; the new rank i is
// ranks[i]). Only those ranks call it, all with the same list. name may be
// "" for a generated one. Closing c closes the new communicator.
func (c *Communicator) Group(ranks []int, name string) (*Communicator, error) {
	const call = "comm.Group"
	members, err := c.groupRanks(call, ranks)
	if err != nil {
		return nil, err
	}
	return c.adopt(call, name, func(ptr uintptr, out *uintptr, cname string) capi.Enum_SS_comm_status {
		return capi.Comm_group_create(out, ptr, len(ranks), &members[0], cname)
	})
}

func checkColor(call string, color int) error {
	if color < 0 && color != Undefined {
		return argumentError(call, "color %d is negative and not Undefined", color)
	}
	return nil
}

// groupRanks checks the ranks of a group of c and converts them to C's.
func (c *Communicator) groupRanks(call string, ranks []int) ([]int32, error) {
	members := make([]int32, len(ranks)+1) // +1: never a zero-length array to point into
	for i, r := range ranks {
		if r < 0 || r >= c.Size() {
			return nil, argumentError(call, "ranks[%d] = %d is not a rank of %q (0..%d)", i, r, c.Name(), c.Size()-1)
		}
		members[i] = int32(r)
	}
	return members, nil
}

// Abort makes every pending and future wait on c fail with ErrAborted (on
// every group too, for the world). It may be called from any goroutine, also
// while another waits on c; c must still be closed.
func (c *Communicator) Abort() error {
	return c.stop("comm.Abort", capi.Comm_abort)
}

// Revoke makes every pending and future operation on c fail with ErrRevoked,
// on this rank and on every other live member (the C library passes the
// news on; one rank calling it is enough). It may be called from any
// goroutine; c must still be closed.
func (c *Communicator) Revoke() error {
	return c.stop("comm.Revoke", capi.Comm_revoke)
}

// FailedRank is the world rank of the first failed rank this rank knows of,
// or -1: the rank whose end made an operation on c or another communicator
// of its world fail with ErrRemote, as this rank saw it or as commrun or
// another rank reported it. Not collective.
func (c *Communicator) FailedRank() (int, error) {
	out := int32(-1)
	err := c.do("comm.FailedRank", func(ptr uintptr) error { return check(capi.Comm_failed_rank(&out, ptr)) })
	return int(out), err
}

// FailedRanks are the ranks of c this rank knows to have failed, ascending.
// What this rank knows, not an agreement: Agree and Shrink give every live
// rank the same set. Not collective.
func (c *Communicator) FailedRanks() ([]int, error) {
	var count int32
	ranks := make([]int32, c.Size()+1) // +1: never a zero-length array to point into
	err := c.do("comm.FailedRanks", func(ptr uintptr) error {
		return check(capi.Comm_failed_ranks(&count, &ranks[0], c.size, ptr))
	})
	if err != nil {
		return nil, err
	}
	return someRanks(ranks, count, c.size), nil
}

// Agree is fault-tolerant agreement: every live rank of c calls it with its
// flags, and each gets the same result: the bitwise AND of the flags of the
// ranks that took part, and the ranks of c that did not, ascending (the
// others proved them dead). It holds when ranks die during the call. Use it
// to decide together whether a step committed. On a revoked c it fails with
// ErrRevoked: Shrink c, then agree on the new communicator.
func (c *Communicator) Agree(flags uint32) (uint32, []int, error) {
	var count int32
	failed := make([]int32, c.Size()+1) // +1: never a zero-length array to point into
	err := c.do("comm.Agree", func(ptr uintptr) error {
		return check(capi.Comm_agree(&flags, &count, &failed[0], c.size, ptr))
	})
	if err != nil {
		return 0, nil, err
	}
	return flags, someRanks(failed, count, c.size), nil
}

// someRanks is the first count of ranks (at most capacity) as []int.
func someRanks(ranks []int32, count int32, capacity int) []int {
	n := int(count)
	if n > capacity {
		n = capacity
	}
	out := make([]int, n)
	for i := range out {
		out[i] = int(ranks[i])
	}
	return out
}

// Shrink makes a communicator of c's live ranks: they agree on which ranks
// failed (as Agree) and the others form the new communicator, renumbered in
// their order in c. Every live rank of c calls it; it needs nothing from a
// dead rank. c may be revoked (the usual way: Revoke, then Shrink) and is
// left as it was: close it after. With no failure the new communicator has
// every rank of c. name may be "" for c's name + "-shrunk". The new
// communicator belongs to the world, which must outlive it: closing the
// world closes it, closing c does not.
func (c *Communicator) Shrink(name string) (*Communicator, error) {
	world := c.world()
	if world != c {
		// Held before c's, as the world's Close takes them: the world
		// cannot close between the shrink and the adoption.
		world.mu.RLock()
		defer world.mu.RUnlock()
	}
	return c.adoptInto(world, "comm.Shrink", name,
		func(ptr uintptr, out *uintptr, cname string) capi.Enum_SS_comm_status {
			return capi.Comm_shrink(out, ptr, cname)
		})
}

// Grow makes a communicator of c's ranks and count newcomers: processes
// started later whose Init joins with the setting "join" = "1"
// (WithSetting("join", "1"), or COMM_JOIN=1; commrun --replace starts its
// replacements so), and whose Init returns their part of it. Every rank of
// c calls it with the same count (1..65535). c's ranks keep their ranks,
// the newcomers take the next ones, in the order they came. State transfer
// is the caller's (a broadcast from a rank of c). The new communicator is
// a world of its own (ToWorldRank gives its own ranks); here it belongs to
// c's world, as Shrink's does: closing the world closes it, closing c does
// not. c must have no failed rank (Shrink it first) and goes on working.
// It waits at most c's timeout for the newcomers (ErrTimeout); a rank that
// has failed, or dies meanwhile, gives ErrRemote; counts that differ among
// the ranks give ErrInvalidArgument. name may be "" for c's name +
// "-grown".
func (c *Communicator) Grow(count int, name string) (*Communicator, error) {
	if err := checkGrowCount("comm.Grow", count); err != nil {
		return nil, err
	}
	world := c.world()
	if world != c {
		// Held before c's, as the world's Close takes them: the world
		// cannot close between the grow and the adoption.
		world.mu.RLock()
		defer world.mu.RUnlock()
	}
	return c.adoptInto(world, "comm.Grow", name,
		func(ptr uintptr, out *uintptr, cname string) capi.Enum_SS_comm_status {
			return capi.Comm_grow(out, ptr, count, cname)
		})
}

// checkGrowCount refuses a count that a C int cannot hold; the C library
// judges the range of the others.
func checkGrowCount(call string, count int) error {
	if count < math.MinInt32 || count > math.MaxInt32 {
		return argumentError(call, "count %d is outside 1..65535", count)
	}
	return nil
}

// world is the communicator c was made from, through its parents.
func (c *Communicator) world() *Communicator {
	world := c
	for world != nil && world.parent != nil {
		world = world.parent
	}
	return world
}

// stop runs Abort's or Revoke's C call on c, which may come from any
// goroutine while others wait on c, but not once c is closed.
func (c *Communicator) stop(call string, cCall func(uintptr) capi.Enum_SS_comm_status) error {
	if c == nil {
		return usageError(call, "the communicator is nil")
	}
	c.abortMu.Lock()
	defer c.abortMu.Unlock()
	if c.ptr == 0 {
		return c.closedError(call)
	}
	return locked(func() error { return check(cCall(c.ptr)) })
}

// Close leaves c: it gives up the communicators still being made from c
// (or, for the world, shrunk from its groups), closes the groups made from
// c, then c's handles (each waits for its operation), then c once calls in
// progress on other goroutines have returned. Not collective. Closing again
// does nothing.
func (c *Communicator) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.ptr == 0 {
		c.mu.Unlock()
		return nil
	}
	c.ownedMu.Lock()
	makings := make([]*Making, 0, len(c.makings))
	for m := range c.makings {
		makings = append(makings, m)
	}
	c.ownedMu.Unlock()
	for _, m := range makings {
		m.Close() // before the children are listed: a making that completed is one
	}
	c.ownedMu.Lock()
	children := make([]*Communicator, 0, len(c.children))
	for child := range c.children {
		children = append(children, child)
	}
	handles := make([]*Handle, 0, len(c.handles))
	for h := range c.handles {
		handles = append(handles, h)
	}
	c.ownedMu.Unlock()
	for _, child := range children {
		child.Close()
	}
	for _, h := range handles {
		h.Close()
	}
	c.abortMu.Lock()
	ptr := c.ptr
	c.ptr = 0
	c.abortMu.Unlock()
	err := locked(func() error { return check(capi.Comm_destroy(ptr)) })
	c.mu.Unlock()
	if c.parent != nil {
		c.parent.ownedMu.Lock()
		delete(c.parent.children, c)
		c.parent.ownedMu.Unlock()
	}
	return err
}

// Barrier returns once every rank of c has called it.
func (c *Communicator) Barrier() error {
	_, err := c.run("comm.Barrier", false, nil, barrier)
	return err
}

// BarrierAsync starts a barrier.
func (c *Communicator) BarrierAsync() (*Handle, error) {
	return c.run("comm.Barrier", true, nil, barrier)
}

func barrier(ptr uintptr, handle *uintptr) error {
	return check(capi.Comm_barrier(ptr, handle))
}

// do runs f, C calls on c's pointer, inside locked and under c's shared lock.
func (c *Communicator) do(call string, f func(ptr uintptr) error) error {
	if c == nil {
		return usageError(call, "the communicator is nil")
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.ptr == 0 {
		return c.closedError(call)
	}
	return locked(func() error { return f(c.ptr) })
}

// native is one communication call on the communicator ptr; handle is nil
// for a blocking call.
type native func(ptr uintptr, handle *uintptr) error

// run makes the call f (inside locked, under c's shared lock) and, for an
// async call, returns the Handle that keeps the memory of views alive until
// the operation completes.
func (c *Communicator) run(call string, async bool, views []view, f native) (*Handle, error) {
	var handle uintptr
	var handleOut *uintptr
	if async {
		handleOut = &handle
	}
	err := c.do(call, func(ptr uintptr) error { return f(ptr, handleOut) })
	// The views' pointers kept the memory alive through the call.
	runtime.KeepAlive(views)
	if err != nil || !async {
		return nil, err
	}
	h := newHandle(c, call, handle, views)
	c.ownedMu.Lock()
	c.handles[h] = struct{}{}
	c.ownedMu.Unlock()
	return h, nil
}

// adopt makes a communicator from c with f and wraps it as c's child (nil
// when f gave none).
func (c *Communicator) adopt(call, name string,
	f func(ptr uintptr, out *uintptr, cname string) capi.Enum_SS_comm_status) (*Communicator, error) {
	return c.adoptInto(c, call, name, f)
}

// adoptInto is adopt with the new communicator a child of owner.
func (c *Communicator) adoptInto(owner *Communicator, call, name string,
	f func(ptr uintptr, out *uintptr, cname string) capi.Enum_SS_comm_status) (*Communicator, error) {
	if strings.ContainsRune(name, 0) {
		return nil, argumentError(call, "name %q holds a NUL character", name)
	}
	var child *Communicator
	err := c.do(call, func(ptr uintptr) error {
		var out uintptr
		if err := check(f(ptr, &out, name)); err != nil || out == 0 {
			return err
		}
		made, err := wrap(out, owner)
		if err != nil {
			return err
		}
		child = made
		owner.ownedMu.Lock()
		owner.children[child] = struct{}{}
		owner.ownedMu.Unlock()
		return nil
	})
	return child, err
}

func (c *Communicator) forgetHandle(h *Handle) {
	if c == nil { // a Making's handle
		return
	}
	c.ownedMu.Lock()
	delete(c.handles, h)
	c.ownedMu.Unlock()
}

func (c *Communicator) closedError(call string) error {
	return usageError(call, "communicator %q is closed", c.name)
}

// checkRank reports a rank argument outside 0..size-1 (nil: fine).
func (c *Communicator) checkRank(call, what string, rank int) error {
	if c != nil && (rank < 0 || rank >= c.size) {
		return argumentError(call, "%s %d is not a rank of %q (0..%d)", what, rank, c.name, c.size-1)
	}
	return nil
}

// checkCounts converts per-rank counts (one per rank, none negative: the C
// call reads size entries) to the C layout, with one spare entry so that
// the array is never empty.
func (c *Communicator) checkCounts(call, what string, counts []int) ([]int64, error) {
	if c == nil {
		return nil, usageError(call, "the communicator is nil")
	}
	if len(counts) != c.size {
		return nil, argumentError(call, "%s has %d entries but %q has %d ranks", what, len(counts), c.name, c.size)
	}
	out := make([]int64, len(counts)+1)
	for i, n := range counts {
		if n < 0 {
			return nil, argumentError(call, "%s[%d] = %d is negative", what, i, n)
		}
		out[i] = int64(n)
	}
	return out, nil
}
