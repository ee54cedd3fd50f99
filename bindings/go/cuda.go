package comm

import "libcomm.org/comm/internal/capi"

// HasCUDA reports whether the loaded C library was built with CUDA device
// memory. Without it, a DeviceSlice is refused with ErrNotSupported, the
// message saying that the call needs a build of comm with CUDA; with it,
// on a machine that shows no device, the message says no CUDA device is
// visible, and why.
func HasCUDA() bool {
	var has int32 // stays 0 where the library is older than the feature
	capi.Comm_has_feature(&has, capi.COMM_FEATURE_CUDA)
	return has == 1
}

// CUDADevices is the number of CUDA devices this process sees and, when it
// is 0, why in words (no CUDA in the build, no driver, no GPU); the reason
// is "" when a device is visible.
func CUDADevices() (count int, reason string) {
	count = int(capi.Comm_go_cuda_device_count())
	if count == 0 {
		reason = capi.Comm_go_cuda_unavailable_reason()
	}
	return count, reason
}
