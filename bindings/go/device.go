package comm

import (
	"sort"
	"sync"
	"unsafe"
)

// DeviceSlice is a slice over length elements of CUDA device memory at ptr
// on device (its ordinal), as a CUDA library hands it out (cudaMalloc, a
// framework's tensor): every collective, send and receive of this package
// takes it where it takes a slice, and moves the data on the device
// (docs/cuda.md). Go cannot address device memory: never index the slice,
// only pass it (or a re-slice of it) to comm. The memory stays the
// caller's; ReleaseDeviceSlice tells comm to forget it before it is freed.
// A build of comm without CUDA, or a machine without that device, fails
// the call that uses the slice with ErrNotSupported.
func DeviceSlice[T Numeric](ptr uintptr, length, device int) ([]T, error) {
	const call = "comm.DeviceSlice"
	var zero T
	size := uintptr(unsafe.Sizeof(zero))
	switch {
	case ptr == 0:
		return nil, argumentError(call, "the device pointer is 0")
	case length <= 0:
		return nil, argumentError(call, "length %d is not positive", length)
	case device < 0:
		return nil, argumentError(call, "device %d is negative", device)
	case uintptr(length) > (^uintptr(0)-ptr)/size:
		return nil, argumentError(call, "%d elements from %#x pass the end of the address space", length, ptr)
	}
	span := deviceSpan{start: ptr, end: ptr + uintptr(length)*size, device: device}
	if err := deviceSpans.add(span); err != nil {
		return nil, argumentError(call, "%v", err)
	}
	// The address's bits as a pointer, which points outside Go's heap, so the
	// collector ignores it (read through &ptr: a plain conversion of a
	// uintptr is what go vet rightly distrusts for Go memory).
	address := *(*unsafe.Pointer)(unsafe.Pointer(&ptr))
	return unsafe.Slice((*T)(address), length), nil
}

// ReleaseDeviceSlice makes comm forget a slice DeviceSlice returned (call
// it before the device memory is freed; the slice must not be used with
// comm afterwards). A slice comm does not know is left alone.
func ReleaseDeviceSlice[T Numeric](s []T) {
	if len(s) > 0 {
		deviceSpans.remove(uintptr(unsafe.Pointer(&s[0])))
	}
}

// deviceOf is the device of the memory at address, or -1 for host memory.
func deviceOf(address unsafe.Pointer) int {
	return deviceSpans.deviceOf(uintptr(address))
}

type deviceSpan struct {
	start, end uintptr
	device     int
}

// The device memory DeviceSlice was given, sorted by address; host slices
// are looked up in it on every call, so it is read-locked only.
var deviceSpans spanSet

type spanSet struct {
	sync.RWMutex
	spans []deviceSpan
}

func (s *spanSet) add(span deviceSpan) error {
	s.Lock()
	defer s.Unlock()
	at := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].start >= span.start })
	if (at < len(s.spans) && s.spans[at].start < span.end) || (at > 0 && s.spans[at-1].end > span.start) {
		return &overlapError{span}
	}
	s.spans = append(s.spans, deviceSpan{})
	copy(s.spans[at+1:], s.spans[at:])
	s.spans[at] = span
	return nil
}

func (s *spanSet) remove(start uintptr) {
	s.Lock()
	defer s.Unlock()
	at := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].start >= start })
	if at < len(s.spans) && s.spans[at].start == start {
		s.spans = append(s.spans[:at], s.spans[at+1:]...)
	}
}

func (s *spanSet) deviceOf(address uintptr) int {
	s.RLock()
	defer s.RUnlock()
	if len(s.spans) == 0 {
		return -1
	}
	// The last span starting at or before address holds it, if any does.
	at := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].start > address }) - 1
	if at >= 0 && address < s.spans[at].end {
		return s.spans[at].device
	}
	return -1
}

type overlapError struct{ span deviceSpan }

func (e *overlapError) Error() string {
	return "its memory overlaps a device slice comm already knows (release that one first)"
}
