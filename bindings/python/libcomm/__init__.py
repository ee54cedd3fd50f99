"""libcomm: collective communication for Python, with the API of
``mindspore.communication`` and its ``comm_func`` (2.6) on numpy arrays.

    import libcomm as comm
    comm.init()
    out, _ = comm.all_reduce(np.ones(4, np.float32))

Run a script on N ranks with ``commrun -n N python3 script.py`` (torchrun,
msrun, srun and mpirun work too).
"""

import os as _os

# libfabric's PSM provider (libinfinipath) installs, from its constructor as
# _comm_swig loads libcomm, handlers that turn a crash into "exit 1" and take
# SIGINT from Python; unless the user decided, it is told not to
# (src/transport/ofi/crash_signals.h).
_os.environ.setdefault("IPATH_NO_BACKTRACE", "1")

from . import _library_version  # noqa: E402

try:
    from . import _comm_swig as _c
except ImportError as _error:
    raise _library_version.explain(_error) from _error
from .arrays import bfloat16, from_dlpack
from .comm_func import *  # noqa: F401,F403
from .comm_func import __all__ as _comm_func_all
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors_all
from .features import *  # noqa: F401,F403
from .features import __all__ as _features_all
from .management import *  # noqa: F401,F403
from .management import __all__ as _management_all
from .ops import ReduceOp

# Refuse, at import, a libcomm.so of another major version or an older minor
# than the comm.h this extension was built against.
_c.comm_check_version(_c.COMM_VERSION_MAJOR, _c.COMM_VERSION_MINOR)

#: Version of the C library actually loaded ("MAJOR.MINOR.PATCH").
__version__ = _c.comm_version_string()

__all__ = ["ReduceOp", "bfloat16", "from_dlpack", "__version__", *_management_all, *_comm_func_all, *_errors_all, *_features_all]
