"""Exceptions raised for failures reported by the C library.

Mistakes caught in Python raise what ``mindspore.communication.comm_func``
raises for them (TypeError, ValueError). A failing C call raises a subclass
of :class:`CommError` chosen by its status, carrying the C library's message
(``comm_last_error()``), which names the call, the object and the cause.
``CommError`` is a RuntimeError, as comm_func's backend failures are; a few
subclasses are also the builtin exception a Python user would catch for the
same cause (a bad argument is a ValueError, a timeout a TimeoutError).
"""

from . import _comm_swig as _c

__all__ = [
    "CommError",
    "CommInvalidArgumentError",
    "CommInvalidUsageError",
    "CommNotSupportedError",
    "CommNoMemoryError",
    "CommTimeoutError",
    "CommRemoteError",
    "CommMismatchError",
    "CommAbortedError",
    "CommTransportError",
    "CommBootstrapError",
    "CommInternalError",
    "CommRevokedError",
]


class CommError(RuntimeError):
    """A C call failed; ``status`` is its comm_status_t, ``str()`` its message."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class CommInvalidArgumentError(CommError, ValueError):
    """COMM_ERR_INVALID_ARGUMENT: an argument the C layer rejected."""


class CommInvalidUsageError(CommError):
    """COMM_ERR_INVALID_USAGE: a call in the wrong state (destroyed object...)."""


class CommNotSupportedError(CommError, NotImplementedError):
    """COMM_ERR_NOT_SUPPORTED: valid, but not available in this build."""


class CommNoMemoryError(CommError, MemoryError):
    """COMM_ERR_NO_MEMORY."""


class CommTimeoutError(CommError, TimeoutError):
    """COMM_ERR_TIMEOUT: a deadline passed; the message names what was awaited."""


class CommRemoteError(CommError):
    """COMM_ERR_REMOTE: a peer died or reported failure."""


class CommMismatchError(CommError):
    """COMM_ERR_MISMATCH: ranks called different collectives or arguments."""


class CommAbortedError(CommError):
    """COMM_ERR_ABORTED: the group was aborted."""


class CommTransportError(CommError):
    """COMM_ERR_TRANSPORT: the fabric failed."""


class CommBootstrapError(CommError):
    """COMM_ERR_BOOTSTRAP: rendezvous or the launcher's environment failed."""


class CommInternalError(CommError):
    """COMM_ERR_INTERNAL: a bug in comm; please report the message."""


class CommRevokedError(CommError):
    """COMM_ERR_REVOKED: the group was revoked (revoke()); the message names the rank."""


ERROR_CLASSES = {
    _c.COMM_ERR_INVALID_ARGUMENT: CommInvalidArgumentError,
    _c.COMM_ERR_INVALID_USAGE: CommInvalidUsageError,
    _c.COMM_ERR_NOT_SUPPORTED: CommNotSupportedError,
    _c.COMM_ERR_NO_MEMORY: CommNoMemoryError,
    _c.COMM_ERR_TIMEOUT: CommTimeoutError,
    _c.COMM_ERR_REMOTE: CommRemoteError,
    _c.COMM_ERR_MISMATCH: CommMismatchError,
    _c.COMM_ERR_ABORTED: CommAbortedError,
    _c.COMM_ERR_TRANSPORT: CommTransportError,
    _c.COMM_ERR_BOOTSTRAP: CommBootstrapError,
    _c.COMM_ERR_INTERNAL: CommInternalError,
    _c.COMM_ERR_REVOKED: CommRevokedError,
}

for _status, _cls in ERROR_CLASSES.items():
    _c.set_error_class(_status, _cls)
