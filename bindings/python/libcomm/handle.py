"""CommHandle: an operation started with ``async_op=True`` (or isend/irecv)."""

from typing import Any

from . import _comm_swig as _c
from .errors import CommError, CommTimeoutError

__all__ = ["CommHandle"]


class CommHandle:
    """Wait for an asynchronous operation. Its result arrays are filled when
    :meth:`wait` returns; until then the handle keeps the operation's input
    and output arrays alive, so the caller may drop its own references.
    Dropping the handle itself first waits for the operation.
    """

    __slots__ = ("_handle", "_keep", "_error")

    def __init__(self, handle: Any, keep: Any) -> None:
        self._handle = handle
        self._keep = keep
        self._error: CommError | None = None

    def wait(self, timeout: float | None = None) -> None:
        """Block until the operation completes (the GIL is released meanwhile).

        ``timeout`` in seconds; None waits up to the group's own deadline.
        When ``timeout`` passes first, raises CommTimeoutError and the
        operation goes on: wait again later. Raises the operation's CommError
        when it failed (again on every later call).
        """
        if self._handle is not None:
            timeout_ms = _c.COMM_TIMEOUT_DEFAULT if timeout is None else max(0, round(timeout * 1000))
            try:
                _c.comm_handle_wait(self._handle, timeout_ms)
            except CommTimeoutError as error:
                if timeout is not None:
                    raise
                self._error = error
            except CommError as error:
                self._error = error
            self._close()
        if self._error is not None:
            raise self._error

    def is_completed(self) -> bool:
        """True once the operation has completed, False while it runs; raises
        its CommError when it failed."""
        if self._handle is not None:
            try:
                if _c.comm_handle_test(self._handle) == _c.COMM_IN_PROGRESS:
                    return False
            except CommError as error:
                self._error = error
            self._close()
        if self._error is not None:
            raise self._error
        return True

    def _close(self) -> None:
        # Destroying waits for the operation, so the arrays outlive its last write.
        handle, self._handle = self._handle, None
        _c.comm_handle_destroy(handle)
        self._keep = None

    def __del__(self) -> None:
        if self._handle is not None:
            self._close()
