#!/usr/bin/env bash
# Build comm and run the demo on 4 ranks through commrun (the README's demo command).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
"$build/tools/commrun/commrun" -n "${RANKS:-4}" "$build/examples/comm-demo"
