#!/usr/bin/env bash
# The layer check fails, naming the file, when a lower folder includes a
# higher one or one transport's folder another's, and passes again once the
# include is gone.
# usage: detects_violation.sh CHECK_SCRIPT SRC_DIR
set -euo pipefail
check="$1" src="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/src"
"$check" "$work/src" >/dev/null || { echo "FAILED: the unmodified tree does not pass"; exit 1; }

echo '#include "core/communicator.h"' >>"$work/src/common/deadline.h"
if output=$("$check" "$work/src"); then
  echo "FAILED: common/ including core/ passed the check"
  exit 1
fi
grep -q 'common/deadline.h:.*common/ includes core/' <<<"$output" || {
  echo "FAILED: the report does not name the file and layers: $output"
  exit 1
}

echo '#include "transport/tcp/tcp_transport.h"' >>"$work/src/transport/shm/shm_transport.h"
if output=$("$check" "$work/src"); then
  echo "FAILED: one transport's folder including another's passed the check"
  exit 1
fi
grep -q 'transport/shm/shm_transport.h:.*includes transport/tcp/' <<<"$output" || {
  echo "FAILED: the report does not name the file and the transport: $output"
  exit 1
}
sed -i '$d' "$work/src/transport/shm/shm_transport.h"

mkdir "$work/src/newfolder"
echo 'int x;' >"$work/src/newfolder/x.cc"
sed -i '$d' "$work/src/common/deadline.h"
if "$check" "$work/src" >/dev/null; then
  echo "FAILED: a folder in no layer passed the check"
  exit 1
fi
echo "passed"
