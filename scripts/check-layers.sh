#!/usr/bin/env bash
# Fails when a folder of src/ includes a header of a folder above it.
# The layers, lowest first (docs/architecture.md explains them): a folder may
# include its own headers and those of the folders before it, never after.
#
#   scripts/check-layers.sh [SRC_DIR]     # default: the src/ beside this script
set -euo pipefail
src="${1:-$(cd "$(dirname "$0")/../src" && pwd)}"
layers=(common reduce topo bootstrap cuda transport core algo api)

# Bash's own matching, no process per include: the check runs many times in
# the tests.
declare -A rank_of
for i in "${!layers[@]}"; do rank_of[${layers[$i]}]=$i; done
include_re='#[[:space:]]*include "([a-z_]+)/'
transport_re='#[[:space:]]*include "transport/([a-z_]+)/'

violations=0
for dir in "$src"/*/; do
  folder=$(basename "$dir")
  own=${rank_of[$folder]:--1}
  if [ "$own" -lt 0 ]; then
    echo "check-layers: src/$folder/ is in no layer: add it to scripts/check-layers.sh and docs/architecture.md"
    violations=$((violations + 1))
    continue
  fi
  while IFS=: read -r file line text; do
    [[ $text =~ $include_re ]] || continue
    target=${BASH_REMATCH[1]}
    theirs=${rank_of[$target]:--1}
    [ "$theirs" -lt 0 ] && continue  # not a folder of src/
    if [ "$theirs" -gt "$own" ]; then
      echo "check-layers: ${file#"$src"/}:$line: $folder/ includes $target/, a layer above it: $text"
      violations=$((violations + 1))
    fi
  done < <(grep -rnE '^\s*#\s*include "[a-z_]+/' "$dir" --include='*.h' --include='*.cc' --include='*.c' \
             --include='*.cu' --include='*.cuh' || true)
done

# Each transport's folder is its own: outside it only the hybrid transport,
# which routes peers to them, includes its headers, and transport/options.h
# its options header (<name>_options.h), which the world fills from the settings.
while IFS=: read -r file line text; do
  inside=${file#"$src"/}
  [[ $text =~ $transport_re ]] || continue
  target=${BASH_REMATCH[1]}
  [[ "$inside" == transport/"$target"/* || "$inside" == transport/hybrid_transport.* ]] && continue
  [[ "$inside" == transport/options.h && $text == *"/${target}_options.h\""* ]] && continue
  echo "check-layers: $inside:$line: includes transport/$target/, which only transport/hybrid_transport.* (and" \
    "transport/options.h, its options) may: $text"
  violations=$((violations + 1))
done < <(grep -rnE '^\s*#\s*include "transport/[a-z_]+/' "$src" --include='*.h' --include='*.cc' --include='*.c' \
           --include='*.cu' --include='*.cuh' || true)

if [ "$violations" -gt 0 ]; then
  echo "check-layers: $violations include(s) against the layer order: ${layers[*]}"
  exit 1
fi
echo "check-layers: every include follows the layer order: ${layers[*]}"
