"""The ``commrun`` command of a pip-installed libcomm: runs the launcher
binary that the package carries (libcomm/bin/commrun), so that
``commrun -n 2 python3 script.py`` works in the environment libcomm was
installed into."""

import os
import sys
from pathlib import Path


def main() -> None:
    """Replace this process with libcomm's commrun, passing the arguments on."""
    binary = Path(__file__).resolve().parent / "bin" / "commrun"
    if not os.access(binary, os.X_OK):
        sys.exit(f"commrun: {binary} is missing: this libcomm was not installed by pip "
                 "(use the commrun of the comm installation or build tree instead)")
    os.execv(binary, [str(binary), *sys.argv[1:]])
