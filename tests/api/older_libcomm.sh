#!/bin/sh
# A binding run against an older libcomm.so.0 than it was built for must say
# which version it found and which it needs. The older library is a
# stand-in (stand_in_libcomm.sh) of the newest release before this
# version, from its baseline in abi/: its version nodes, its version string,
# found first through LD_LIBRARY_PATH.
# usage: older_libcomm.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR COMM_MAP BASELINE_DIR VERSION -- COMMAND...
set -eu
cxx="$1" include="$2" generated="$3" map="$4" baselines="$5" version="$6"
shift 6; [ "$1" = -- ] && shift
here="$(cd "$(dirname "$0")" && pwd)"
needed="${version%.*}"

older=""
for baseline in $(ls "$baselines"/libcomm-*.abi | sort -V); do
  release=$(basename "$baseline" .abi); release=${release#libcomm-}
  [ "${release%.*}" = "$needed" ] || older="$release"
done
[ -n "$older" ] || { echo "older_libcomm: no baseline in $baselines older than $needed"; exit 1; }

scratch="$(mktemp -d /tmp/comm-older-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
# The map of that release: the nodes its baseline has, in the map's order.
nodes=$(sed -n "s/.*<elf-symbol name='[^']*' version='\([^']*\)'.*/\1/p" "$baselines/libcomm-$older.abi" | sort -u)
awk -v nodes="$nodes" 'BEGIN {split(nodes, list, "\n"); for (i in list) keep[list[i]] = 1}
  /^COMM_[0-9.]* *\{/ {node = $1; if (!(node in keep)) skipping = 1}
  !skipping {print}' "$map" >"$scratch/comm.map"
"$here/stand_in_libcomm.sh" "$cxx" "$include" "$generated" "$scratch/comm.map" "$scratch/libcomm.so.$older" "$older"
ln -s "libcomm.so.$older" "$scratch/libcomm.so.0"

set +e
LD_LIBRARY_PATH="$scratch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@" >"$scratch/out" 2>&1
status=$?
set -e
cat "$scratch/out"
[ "$status" != 0 ] || { echo "older_libcomm: the command ran against libcomm $older as if it were $needed"; exit 1; }
for words in "needs libcomm $needed or newer" "libcomm $older"; do
  grep -qF "$words" "$scratch/out" || { echo "older_libcomm: the error does not say \"$words\""; exit 1; }
done
echo "older_libcomm: refused libcomm $older, needing $needed"
