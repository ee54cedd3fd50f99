package comm

import (
	"math"
	"reflect"
	"unsafe"

	"libcomm.org/comm/internal/capi"
)

// Op is a reduction operator, the C library's comm_op_t.
type Op int

// The reduction operators.
const (
	Sum  Op = 0
	Prod Op = 1
	Min  Op = 2
	Max  Op = 3
	Avg  Op = 4 // the sum divided by the number of ranks; integers truncate toward zero; not for bool
	BAnd Op = 5 // bitwise and: integer and bool elements only
	BOr  Op = 6 // bitwise or: integer and bool elements only
	BXor Op = 7 // bitwise exclusive or: integer and bool elements only
)

// String is the C library's name of the op ("sum").
func (op Op) String() string {
	return capi.Comm_op_name(capi.Enum_SS_comm_op(op))
}

// Numeric is the element types comm moves: Go's integers, floats and bool,
// types defined on them, and Float16 and BFloat16. int and uint travel as
// 64-bit integers (on 64-bit platforms).
type Numeric interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 |
		~int | ~uint | ~float32 | ~float64 | ~bool
}

// Float16 is an IEEE 754 half-precision number, stored as its bits.
type Float16 uint16

// BFloat16 is a bfloat16 number (the top half of a float32), stored as its bits.
type BFloat16 uint16

// Float32 is f's value.
func (f Float16) Float32() float32 {
	sign := uint32(f&0x8000) << 16
	exponent := uint32(f>>10) & 0x1f
	mantissa := uint32(f) & 0x3ff
	switch {
	case exponent == 0x1f: // infinity, NaN
		return math.Float32frombits(sign | 0x7f800000 | mantissa<<13)
	case exponent != 0:
		return math.Float32frombits(sign | (exponent+127-15)<<23 | mantissa<<13)
	default: // zero, subnormal: mantissa x 2^-24
		value := float32(mantissa) / (1 << 24)
		if sign != 0 {
			return -value
		}
		return value
	}
}

// Float16Of is v rounded to the nearest Float16 (ties to even).
func Float16Of(v float32) Float16 {
	bits := math.Float32bits(v)
	sign := uint16(bits>>16) & 0x8000
	exponent := int(bits>>23&0xff) - 127 + 15
	mantissa := bits & 0x7fffff
	switch {
	case bits&0x7fffffff > 0x7f800000: // NaN: keep it quiet
		return Float16(sign | 0x7e00)
	case exponent >= 0x1f: // too large, or infinity
		return Float16(sign | 0x7c00)
	case exponent <= 0: // subnormal or zero in float16
		if exponent < -10 {
			return Float16(sign)
		}
		mantissa |= 0x800000
		shift := uint(14 - exponent)
		half := mantissa >> shift
		rest := mantissa & (1<<shift - 1)
		if middle := uint32(1) << (shift - 1); rest > middle || rest == middle && half&1 == 1 {
			half++
		}
		return Float16(sign | uint16(half))
	}
	half := uint32(exponent)<<10 | mantissa>>13
	if rest := mantissa & 0x1fff; rest > 0x1000 || rest == 0x1000 && half&1 == 1 {
		half++ // may carry into the exponent, up to infinity: still right
	}
	return Float16(sign | uint16(half))
}

// Float32 is b's value.
func (b BFloat16) Float32() float32 {
	return math.Float32frombits(uint32(b) << 16)
}

// BFloat16Of is v rounded to the nearest BFloat16 (ties to even).
func BFloat16Of(v float32) BFloat16 {
	bits := math.Float32bits(v)
	if bits&0x7fffffff > 0x7f800000 {
		return BFloat16(bits>>16 | 0x40) // quiet NaN
	}
	bits += 0x7fff + (bits>>16)&1
	return BFloat16(bits >> 16)
}

// dtypeOf is the C dtype of elements of type T.
func dtypeOf[T Numeric]() capi.Enum_SS_comm_dtype {
	var zero T
	switch any(zero).(type) {
	case Float16:
		return capi.COMM_FLOAT16
	case BFloat16:
		return capi.COMM_BFLOAT16
	}
	switch reflect.TypeOf(zero).Kind() {
	case reflect.Int8:
		return capi.COMM_INT8
	case reflect.Uint8:
		return capi.COMM_UINT8
	case reflect.Int16:
		return capi.COMM_INT16
	case reflect.Uint16:
		return capi.COMM_UINT16
	case reflect.Int32:
		return capi.COMM_INT32
	case reflect.Uint32:
		return capi.COMM_UINT32
	case reflect.Int64:
		return capi.COMM_INT64
	case reflect.Uint64:
		return capi.COMM_UINT64
	case reflect.Int:
		if unsafe.Sizeof(zero) == 4 {
			return capi.COMM_INT32
		}
		return capi.COMM_INT64
	case reflect.Uint:
		if unsafe.Sizeof(zero) == 4 {
			return capi.COMM_UINT32
		}
		return capi.COMM_UINT64
	case reflect.Float32:
		return capi.COMM_FLOAT32
	case reflect.Float64:
		return capi.COMM_FLOAT64
	default: // reflect.Bool, the last type Numeric allows
		return capi.COMM_BOOL
	}
}

// view is a slice as the C library sees it: a one-dimensional tensor over
// the slice's memory. The unsafe.Pointer keeps that memory alive as long as
// the view is.
type view struct {
	data    unsafe.Pointer
	count   int64
	dtype   capi.Enum_SS_comm_dtype
	present bool // false: NULL, for the arguments the C call allows to be absent
	device  int  // the CUDA device of a DeviceSlice's memory; -1: host memory
}

func viewOf[T Numeric](s []T) view {
	v := view{count: int64(len(s)), dtype: dtypeOf[T](), present: true, device: -1}
	if len(s) > 0 {
		v.data = unsafe.Pointer(&s[0])
		v.device = deviceOf(v.data)
	}
	return v
}

// optionalViewOf is NULL for a nil slice (an output off the root, say).
func optionalViewOf[T Numeric](s []T) view {
	if s == nil {
		return view{dtype: dtypeOf[T]()}
	}
	return viewOf(s)
}

// flag is v's presence and memory as the fused calls of package capi take
// it: 0 absent, 1 host memory, 2 + d memory of CUDA device d.
func (v view) flag() int {
	switch {
	case !v.present:
		return 0
	case v.device >= 0:
		return 2 + v.device
	}
	return 1
}

// withDescriptors describes views for the C library (0 for an absent one),
// runs f with the descriptors and releases them; call it inside locked.
func withDescriptors(views []view, f func(tensors []uintptr) error) error {
	tensors := make([]uintptr, len(views)+1) // +1: never a zero-length array to point into
	defer func() {
		for _, t := range tensors {
			capi.Comm_tensor_destroy(t)
		}
	}()
	for i, v := range views {
		if !v.present {
			continue
		}
		shape := v.count
		if err := check(capi.Comm_tensor_create(&tensors[i], v.data, v.dtype, 1, &shape)); err != nil {
			return err
		}
		if v.device >= 0 {
			if err := check(capi.Comm_tensor_set_memory(tensors[i], capi.COMM_MEMORY_CUDA, v.device)); err != nil {
				return err
			}
		}
	}
	return f(tensors)
}
