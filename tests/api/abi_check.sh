#!/bin/sh
# The ABI of a libcomm build against the latest release's baseline
# (abi/libcomm-VERSION.abi, scripts/abi-baseline.sh): nothing removed,
# nothing changed (a type, a parameter, a return type, an enumerator's value
# or the version node of a function), and every added function in a version
# node that the release did not have. Added enumerators are allowed.
# usage: abi_check.sh LIBCOMM INCLUDE_DIR GENERATED_INCLUDE_DIR BASELINE_DIR
set -eu
lib="$1" include="$2" generated="$3" baselines="$4"
here="$(cd "$(dirname "$0")" && pwd)"

baseline=$(ls "$baselines"/libcomm-*.abi 2>/dev/null | sort -V | tail -n 1)
[ -n "$baseline" ] || { echo "abi_check: no libcomm-*.abi baseline in $baselines"; exit 1; }
release=$(basename "$baseline" .abi)

scratch="$(mktemp -d /tmp/comm-abi-check-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
"$here/abi_dump.sh" "$lib" "$include" "$generated" "$scratch/build.abi"
grep -q "<enumerator name='COMM_OK'" "$scratch/build.abi" || {
  echo "abi_check: $lib has no debug information for comm.h's types (build it with -g: RelWithDebInfo or Debug)"
  exit 1
}

# abidiff leaves out harmless changes (added enumerators) unless asked.
set +e
abidiff "$baseline" "$scratch/build.abi" >"$scratch/report"
abidiff_status=$?
set -e
# Bits 1 and 2 of the status are abidiff's own errors; 4 is a change, 8 an incompatible one.
[ $((abidiff_status & 3)) = 0 ] || { cat "$scratch/report"; echo "abi_check: abidiff failed ($abidiff_status)"; exit 1; }

problems=""
count() { sed -n "s/.*$1 changes summary: \([0-9]*\) Removed[^,]*, \([0-9]*\) Changed.*/\1 \2/p" "$scratch/report"; }
for kind in Functions Variables; do
  set -- $(count "$kind") 0 0
  [ "$1" = 0 ] || problems="$problems
  $1 removed (${kind%s} of $release gone or given another version node)"
  [ "$2" = 0 ] || problems="$problems
  $2 changed (${kind%s} whose parameters, return type or types they use changed)"
done
grep -q "Removed.*symbols not referenced by debug info" "$scratch/report" \
  && ! grep -q "0 Removed.*symbols not referenced" "$scratch/report" \
  && problems="$problems
  exported symbols removed"

# An added function must be in a version node the release did not have.
released_nodes=$(sed -n "s/.*<elf-symbol name='[^']*' version='\([^']*\)'.*/\1/p" "$baseline" | sort -u)
added=$(sed -n "s/.*\[A\] 'function [^']*'.*{\([^}]*\)}.*/\1/p" "$scratch/report")
for symbol in $added; do
  node=${symbol#*@@}
  [ "$node" != "$symbol" ] || { problems="$problems
  $symbol added without a version node"; continue; }
  if echo "$released_nodes" | grep -qx "$node"; then
    problems="$problems
  ${symbol%%@@*} added to $node, a version node $release released: add a new node for it (docs/abi.md)"
  fi
done

if [ -n "$problems" ]; then
  cat "$scratch/report"
  echo "abi_check: the ABI of $lib breaks $release's:$problems"
  exit 1
fi
echo "abi_check: compatible with $release; added: $(echo $added | sed 's/@@/ in /g; s/ comm_/, comm_/g')"
