"""Why the extension could not load the C library it needs, in words.

The extension is linked against the libcomm.so.0 it was built with (its
RUNPATH), but LD_LIBRARY_PATH or a moved installation can put an older one
first. The dynamic loader then refuses with "version `COMM_0.3' not found":
each release adds its functions under a version node named after it
(docs/abi.md), so the missing node says which release the binding needs.
This module turns that into a message naming both versions.
"""

import ctypes
import re

_MISSING_NODE = re.compile(r"(?P<library>/\S+libcomm\.so[.\d]*): version `COMM_(?P<needed>[\d.]+)' not found")


def _loaded_version(path: str) -> str:
    """comm_version_string() of the library at `path`, or why it is unknown."""
    try:
        version_string = ctypes.CDLL(path).comm_version_string
    except (OSError, AttributeError) as error:
        return f"an unknown version ({error})"
    version_string.restype = ctypes.c_char_p
    return version_string().decode()


def explain(error: ImportError) -> ImportError:
    """An ImportError naming the libcomm found and the one needed, when
    `error` is the loader's missing-version refusal; else `error` itself."""
    match = _MISSING_NODE.search(str(error))
    if match is None:
        return error
    library, needed = match.group("library"), match.group("needed")
    return ImportError(
        f"libcomm: this Python binding needs libcomm {needed} or newer, but the loader found "
        f"{library}, which is libcomm {_loaded_version(library)}; put the libcomm.so.0 the binding "
        f"was built with first (LD_LIBRARY_PATH) or rebuild the binding against the installed one "
        f"(loader: {error})")
