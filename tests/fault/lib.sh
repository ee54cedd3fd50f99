# Helpers for the commrun tests. Each test script gets the commrun and
# commrun_probe executables as $1 and $2.
set -u
COMMRUN=$1
PROBE=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/out "$WORK"/err; do
    [ -f "$f" ] && { echo "--- $f" >&2; head -c 4000 "$f" >&2; echo >&2; }
  done
  exit 1
}

# run_commrun ARGS...: runs commrun; sets RC and ELAPSED (seconds), keeps
# its stdout and stderr in $WORK/out and $WORK/err.
run_commrun() {
  local start=$EPOCHREALTIME
  "$COMMRUN" "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
  ELAPSED=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "commrun exited $RC, expected $1"; }

# expect_line FILE LINE: FILE has LINE as a whole line.
expect_line() { grep -qxF -- "$2" "$1" || fail "$(basename "$1") lacks the line '$2'"; }

# expect_match FILE REGEX: some line of FILE matches the extended REGEX.
expect_match() { grep -qE -- "$2" "$1" || fail "$(basename "$1") has no line matching '$2'"; }

# expect_faster SECONDS: the last run took less.
expect_faster() {
  awk -v e="$ELAPSED" -v l="$1" 'BEGIN { exit !(e < l) }' || fail "took ${ELAPSED}s, expected under $1s"
}

# expect_dead PIDFILE...: no process of the given pid files is alive.
expect_dead() {
  local file pid
  for file in "$@"; do
    pid=$(cat "$file") || fail "no pid file $file"
    kill -0 "$pid" 2>/dev/null && fail "process $pid ($(basename "$file")) is still alive"
  done
  return 0
}
