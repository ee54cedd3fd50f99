"""Builds the libcomm package with CMake, for pip (pyproject.toml).

The package is built from the comm checkout this file is in (two folders
up): CMake configures the project for the running interpreter with only the
Python binding, builds the extension, libcomm.so and commrun, and installs
them into a staging folder as one self-contained package (the extension
finds libcomm.so beside it through its RUNPATH $ORIGIN), which becomes the
wheel's libcomm/. Extra CMake arguments may be given in CMAKE_ARGS; the
build uses every core unless CMAKE_BUILD_PARALLEL_LEVEL says otherwise.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def project_version() -> str:
    """The version in the root CMakeLists.txt's project(), the only place it is written."""
    cmakelists = ROOT / "CMakeLists.txt"
    match = re.search(r"project\(comm VERSION ([0-9.]+)", cmakelists.read_text()) if cmakelists.is_file() else None
    if match is None:
        sys.exit(f"libcomm: {ROOT} is not a checkout of comm (no project(comm VERSION ...) in {cmakelists}); "
                 "install from a checkout: pip install --no-build-isolation ./bindings/python")
    return match.group(1)


def run(command: list[str], log: Path) -> None:
    """Run a CMake step, its output to ``log``; on failure show the end of it."""
    with log.open("w") as out:
        status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode
    if status != 0:
        tail = log.read_text().splitlines()[-40:]
        sys.exit("libcomm: '{}' failed (exit {}); the end of {}:\n{}".format(
            " ".join(command), status, log, "\n".join(tail)))


class BuildWithCMake(build_py):
    """build_py that puts the CMake-built package into the build folder."""

    def run(self) -> None:
        super().run()
        temp = Path(self.get_finalized_command("build").build_temp).resolve()
        build, staging = temp / "cmake", temp / "staging"
        build.mkdir(parents=True, exist_ok=True)
        run(["cmake", "-S", str(ROOT), "-B", str(build), f"-DPython3_EXECUTABLE={sys.executable}",
             "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF", "-DCOMM_WITH_JAVA=OFF", "-DCOMM_WITH_GO=OFF",
             "-DCOMM_PYTHON_BUNDLE=ON", "-DCOMM_PYTHON_INSTALL_DIR=.", *shlex.split(os.environ.get("CMAKE_ARGS", ""))],
            temp / "configure.log")
        for line in (temp / "configure.log").read_text().splitlines():
            if "Python binding: skipped" in line:
                sys.exit(f"libcomm: CMake left the Python binding out:\n{line.strip()}")
        parallel = [] if "CMAKE_BUILD_PARALLEL_LEVEL" in os.environ else ["--parallel", str(os.cpu_count() or 1)]
        run(["cmake", "--build", str(build), "--target", "libcomm_python", "commrun", *parallel], temp / "build.log")
        shutil.rmtree(staging, ignore_errors=True)
        run(["cmake", "--install", str(build), "--component", "python", "--prefix", str(staging)],
            temp / "install.log")
        shutil.copytree(staging / "libcomm", Path(self.build_lib) / "libcomm", dirs_exist_ok=True)


class BinaryDistribution(Distribution):
    """The wheel holds compiled code for one Python and platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(version=project_version(), cmdclass={"build_py": BuildWithCMake}, distclass=BinaryDistribution)
