"""What this build of the C library has, and what this machine offers it."""

from . import _comm_swig as _c

__all__ = ["has_cuda", "cuda_device_count"]


def has_cuda() -> bool:
    """True when the loaded libcomm was built with CUDA device memory;
    without it, CUDA arrays are refused with CommNotSupportedError saying
    that the call needs a build of comm with CUDA."""
    return bool(_c.comm_has_feature(_c.COMM_FEATURE_CUDA))


def cuda_device_count() -> tuple[int, str]:
    """(devices, reason): the CUDA devices this process sees, and when
    there are none, why in words (no CUDA in this build, no driver, no
    GPU); the reason is "" when a device is visible."""
    return _c.comm_cuda_device_count()
