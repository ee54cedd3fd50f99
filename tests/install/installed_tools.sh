#!/bin/sh
# Install comm into a temporary prefix, move the prefix (an installation
# must not depend on where it was installed), then use the tools from there
# with no LD_LIBRARY_PATH: each one's --help and --version, a 2-rank
# comm-bench all_reduce in check mode, and a 2-rank all_reduce program built
# against the installation, both launched by the installed commrun.
#   installed_tools.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR BINDIR
set -eu
build=$1 source=$2 work=$3 libdir=$4 bindir=$5
unset LD_LIBRARY_PATH
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/installed-here" >/dev/null
mv "$work/installed-here" "$work/prefix"
prefix="$work/prefix"
cd "$work"

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

version=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --modversion comm)
for tool in commrun comm-info comm-bench; do
  path="$prefix/$bindir/$tool"
  [ -x "$path" ] || fail "$tool was not installed in $prefix/$bindir"
  runpath=$(readelf -d "$path" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  case "$runpath" in
    '$ORIGIN/'*) ;;
    *) fail "$tool's RUNPATH is '$runpath', not relative to \$ORIGIN" ;;
  esac
  "$path" --help >help.txt 2>&1 || fail "$tool --help exited $? from $prefix: $(cat help.txt)"
  grep -q "^Usage: " help.txt || fail "$tool --help printed no usage: $(cat help.txt)"
  shown=$("$path" --version) || fail "$tool --version exited $?"
  [ "$shown" = "$tool $version" ] || fail "$tool --version says '$shown', not '$tool $version'"
  echo "$tool: --help and --version work from the moved prefix (RUNPATH $runpath)"
done
# comm-bench is the tool that links libcomm.so: it must load the installed one.
loaded=$(ldd "$prefix/$bindir/comm-bench" | awk '$1 ~ /^libcomm\.so/ {print $3}')
loaded=$(realpath "$loaded")
case "$loaded" in
  "$prefix/$libdir/"*) ;;
  *) fail "comm-bench loads libcomm from '$loaded', not from $prefix/$libdir" ;;
esac

"$prefix/$bindir/commrun" -n 2 --timeout 300 "$prefix/$bindir/comm-bench" all_reduce -b 8 -e 1M -f 32 -d all \
  -o sum -n 2 -w 1 -c 1 >bench.txt 2>&1 || fail "installed comm-bench exited $?: $(cat bench.txt)"
grep -q "#wrong in total: 0 (OK)" bench.txt || fail "comm-bench's results were not checked OK: $(cat bench.txt)"
echo "installed commrun -n 2 comm-bench all_reduce: every dtype checked, #wrong 0"

cc -std=c99 -Wall -Werror -o all_reduce "$source/installed_all_reduce.c" \
  $(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs comm) -Wl,-rpath,"$prefix/$libdir"
"$prefix/$bindir/commrun" -n 2 --timeout 300 ./all_reduce >all_reduce.txt 2>&1 ||
  fail "the installed all_reduce program exited $?: $(cat all_reduce.txt)"
cat all_reduce.txt
for rank in 0 1; do
  grep -q "rank $rank of 2: .*as the reference" all_reduce.txt || fail "rank $rank did not report a correct sum"
done
echo "installed tools passed"
