#!/bin/sh
# What a Python user does: copy the checkout (its tracked and unignored
# files: a clean tree, no build folder), create a venv with
# --system-site-packages (Debian's numpy, setuptools and wheel), `pip
# install --no-build-isolation ./bindings/python` into it (no index: it
# must build offline), then, from an empty folder outside the source tree,
# run a 2-rank all_reduce through the `commrun` pip installed, with the
# venv's python.
#   pip_install.sh SOURCE_DIR WORK_DIR PYTHON
set -eu
source=$1 work=$2 python=$3
unset PYTHONPATH LD_LIBRARY_PATH
fail() {
  echo "FAILED: $*" >&2
  exit 1
}
rm -rf "$work"
mkdir -p "$work/checkout" "$work/run"
if git -C "$source" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$source" ls-files -z --cached --others --exclude-standard |
    tar -C "$source" --null -T - -cf - | tar -C "$work/checkout" -xf -
else
  tar -C "$source" --exclude='./build*' -cf - . | tar -C "$work/checkout" -xf -
fi

"$python" -m venv --system-site-packages "$work/venv"
venv="$work/venv"
"$venv/bin/python" -m pip install --no-build-isolation --no-index "$work/checkout/bindings/python" \
  >"$work/pip.log" 2>&1 || { tail -60 "$work/pip.log"; fail "pip install exited $?"; }
tail -1 "$work/pip.log"
[ -x "$venv/bin/commrun" ] || fail "pip did not install the commrun command"
version=$("$venv/bin/python" -m pip show libcomm | sed -n 's/^Version: //p')
echo "pip installed libcomm $version"

cp "$source/bindings/python/tests/pip_all_reduce.py" "$work/run/"
cd "$work/run"
"$venv/bin/commrun" -n 2 --timeout 300 "$venv/bin/python" pip_all_reduce.py >out.txt 2>&1 ||
  { cat out.txt; fail "the 2-rank all_reduce with the venv's libcomm exited $?"; }
cat out.txt
for rank in 0 1; do
  grep -q "rank $rank of 2: libcomm $version from $venv/.*: all_reduce as the reference" out.txt ||
    fail "rank $rank did not report a correct all_reduce from the venv's libcomm $version"
done
echo "pip install passed"
