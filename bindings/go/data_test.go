package comm_test

import (
	"math"
	"reflect"
	"testing"

	"libcomm.org/comm"
)

// Test inputs are small integers (1..3, or false/true) so that sums,
// products and averages over a few ranks are exact in every type; integer
// results wrap as the C library's do.

func value(rank, i, salt int) int64 {
	return int64((i*5+rank*3+salt)%3 + 1)
}

// of converts an integer to T the way T stores it (wrapping, rounding).
func of[T comm.Numeric](v int64) T {
	var x T
	switch p := any(&x).(type) {
	case *comm.Float16:
		*p = comm.Float16Of(float32(v))
		return x
	case *comm.BFloat16:
		*p = comm.BFloat16Of(float32(v))
		return x
	}
	r := reflect.ValueOf(&x).Elem()
	switch r.Kind() {
	case reflect.Bool:
		r.SetBool(v != 0)
	case reflect.Float32, reflect.Float64:
		r.SetFloat(float64(v))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		r.SetUint(uint64(v))
	default:
		r.SetInt(v)
	}
	return x
}

// number is x as a float64 (bool: 0 or 1).
func number[T comm.Numeric](x T) float64 {
	switch v := any(x).(type) {
	case comm.Float16:
		return float64(v.Float32())
	case comm.BFloat16:
		return float64(v.Float32())
	}
	r := reflect.ValueOf(x)
	switch r.Kind() {
	case reflect.Bool:
		if r.Bool() {
			return 1
		}
		return 0
	case reflect.Float32, reflect.Float64:
		return r.Float()
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return float64(r.Uint())
	default:
		return float64(r.Int())
	}
}

func isBool[T comm.Numeric]() bool {
	var x T
	return reflect.ValueOf(x).Kind() == reflect.Bool
}

func isFloat[T comm.Numeric]() bool {
	var x T
	switch any(x).(type) {
	case comm.Float16, comm.BFloat16:
		return true
	}
	k := reflect.ValueOf(x).Kind()
	return k == reflect.Float32 || k == reflect.Float64
}

// element is element i of rank's input.
func element[T comm.Numeric](rank, i, salt int) T {
	v := value(rank, i, salt)
	if isBool[T]() {
		v %= 2 // both false and true occur
	}
	return of[T](v)
}

// filled is rank's input: n elements.
func filled[T comm.Numeric](rank, n, salt int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = element[T](rank, i, salt)
	}
	return s
}

// reduced is op over element i of every rank's filled input, as a float64.
func reduced[T comm.Numeric](op comm.Op, i, salt int) float64 {
	values := make([]T, size)
	for r := range values {
		values[r] = element[T](r, i, salt)
	}
	if isBool[T]() {
		anyTrue, all, odd := false, true, false
		for _, v := range values {
			b := number(v) != 0
			anyTrue, all, odd = anyTrue || b, all && b, odd != b
		}
		result := anyTrue
		switch op {
		case comm.Prod, comm.Min, comm.BAnd:
			result = all
		case comm.BXor:
			result = odd
		}
		if result {
			return 1
		}
		return 0
	}
	result := int64(number(values[0]))
	for _, v := range values[1:] {
		x := int64(number(v))
		switch op {
		case comm.Sum, comm.Avg:
			result += x
		case comm.Prod:
			result *= x
		case comm.Min:
			if x < result {
				result = x
			}
		case comm.Max:
			if x > result {
				result = x
			}
		case comm.BAnd:
			result &= x
		case comm.BOr:
			result |= x
		case comm.BXor:
			result ^= x
		}
	}
	if op == comm.Avg {
		if isFloat[T]() {
			return float64(result) / float64(size)
		}
		result /= int64(size)
	}
	return number(of[T](result))
}

// expectElements checks every element of got against want(i) (floats to
// 1e-2 relative: float16 averages).
func expectElements[T comm.Numeric](t *testing.T, what string, got []T, want func(i int) float64) {
	t.Helper()
	for i, x := range got {
		w := number(x)
		if e := want(i); math.Abs(w-e) > math.Abs(e)*1e-2 || !isFloat[T]() && w != e {
			t.Fatalf("%s: element %d is %v, want %v", what, i, w, e)
		}
	}
}
