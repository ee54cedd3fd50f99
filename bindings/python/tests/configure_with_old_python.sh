#!/bin/sh
# Configure the project with a Python older than libcomm needs: CMake must
# say why and leave the Python binding out (no libcomm_python target), not
# build an extension whose `import libcomm` would fail. Skips (77) where no
# older Python is installed.
#   configure_with_old_python.sh SOURCE_DIR WORK_DIR MIN_VERSION
set -eu
source=$1 work=$2 min=$3
old=""
for candidate in python3.10 python3.9 python3.8 \
  "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3; do
  path=$(command -v "$candidate" 2>/dev/null) || continue
  # A pyenv shim may exist for a version it then refuses to run.
  if "$path" -c "import sys; sys.exit(sys.version_info[:2] >= tuple(map(int, '$min'.split('.'))))" 2>/dev/null; then
    old=$path
    break
  fi
done
if [ -z "$old" ]; then
  echo "SKIPPED: no Python older than $min is installed to configure with (python3.10, python3.9, ... on PATH or pyenv)"
  exit 77
fi
version=$("$old" -c "import platform; print(platform.python_version())")
rm -rf "$work"
cmake -S "$source" -B "$work" -DPython3_EXECUTABLE="$old" -DCOMM_WITH_JAVA=OFF -DCOMM_WITH_GO=OFF \
  -DBUILD_TESTING=OFF >"$work.log" 2>&1 || { cat "$work.log"; echo "FAILED: configuring with $old failed"; exit 1; }
grep "Python binding" "$work.log"
grep -q "Python binding: skipped (missing Python >= $min for enum.StrEnum (found Python $version at $old:" "$work.log" ||
  { echo "FAILED: CMake did not refuse Python $version at $old"; exit 1; }
if cmake --build "$work" --target help | grep -q libcomm_python; then
  echo "FAILED: the libcomm_python target exists although Python $version is too old"
  exit 1
fi
echo "Python $version: refused at configure time, nothing of the Python binding to build"
