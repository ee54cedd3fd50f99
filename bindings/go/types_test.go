package comm_test

import (
	"math"
	"testing"

	"libcomm.org/comm"
	"libcomm.org/comm/internal/capi"
)

func TestConstantsMatchTheCLibrary(t *testing.T) {
	pairs := map[string][2]int{
		"undefined":        {comm.Undefined, capi.COMM_UNDEFINED},
		"tag max":          {comm.TagMax, capi.COMM_TAG_MAX},
		"sum":              {int(comm.Sum), int(capi.COMM_OP_SUM)},
		"bxor":             {int(comm.BXor), int(capi.COMM_OP_BXOR)},
		"invalid argument": {int(comm.StatusInvalidArgument), int(capi.COMM_ERR_INVALID_ARGUMENT)},
		"timeout":          {int(comm.StatusTimeout), int(capi.COMM_ERR_TIMEOUT)},
		"internal":         {int(comm.StatusInternal), int(capi.COMM_ERR_INTERNAL)},
		"revoked":          {int(comm.StatusRevoked), int(capi.COMM_ERR_REVOKED)},
	}
	for what, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("%s: Go %d, C %d", what, p[0], p[1])
		}
	}
	for op := comm.Sum; op <= comm.BXor; op++ {
		if op.String() != capi.Comm_op_name(capi.Enum_SS_comm_op(op)) || op.String() == "unknown" {
			t.Errorf("op %d is %q", int(op), op.String())
		}
	}
}

func TestFloat16RoundTrips(t *testing.T) {
	for _, c := range []struct {
		value float32
		bits  comm.Float16
	}{{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {1e9, 0x7c00}, {5.960464e-08, 0x0001},
		{0.33325195, 0x3555}, {1.0009766, 0x3c01}, {1.00048828125, 0x3c00} /* tie to even */} {
		if got := comm.Float16Of(c.value); got != c.bits {
			t.Errorf("Float16Of(%v) = %#04x, want %#04x", c.value, uint16(got), uint16(c.bits))
		}
		if c.bits != 0x7c00 && c.bits.Float32() != comm.Float16Of(c.value).Float32() {
			t.Errorf("%#04x.Float32() = %v", uint16(c.bits), c.bits.Float32())
		}
	}
	if !math.IsNaN(float64(comm.Float16Of(float32(math.NaN())).Float32())) {
		t.Error("NaN does not survive")
	}
	if comm.BFloat16Of(3).Float32() != 3 || comm.BFloat16Of(1.00390625).Float32() != 1 {
		t.Error("bfloat16 rounding")
	}
}
