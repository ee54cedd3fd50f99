# Helpers for the trust tests. Each script gets the commrun, trust_probe
# and commrun_probe executables as $1, $2 and $3.
set -u
COMMRUN=$1
PROBE=$2
HELPER=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.out; do
    [ -f "$f" ] && { echo "--- $f" >&2; head -c 4000 "$f" >&2; echo >&2; }
  done
  exit 1
}

# expect_line FILE LINE: FILE has LINE as a whole line.
expect_line() { grep -qxF -- "$2" "$1" || fail "$(basename "$1") lacks the line '$2'"; }

# expect_match FILE REGEX: some line of FILE matches the extended REGEX.
expect_match() { grep -qE -- "$2" "$1" || fail "$(basename "$1") has no line matching '$2'"; }

# start_ranks N PORT MODE [ARGS...]: starts N ranks of trust_probe MODE
# ARGS as a launcher other than commrun would (COMM_RANK, COMM_WORLD_SIZE,
# COMM_MASTER_*; rank 0 hosts the store); rank r writes $WORK/r.out.
# RANK_PIDS lists them.
start_ranks() {
  local n=$1 port=$2 mode=$3 r
  shift 3
  RANK_PIDS=()
  rm -f "$WORK"/*.out
  for r in $(seq 0 $((n - 1))); do
    COMM_RANK=$r COMM_WORLD_SIZE=$n COMM_MASTER_ADDR=127.0.0.1 COMM_MASTER_PORT=$port COMM_TIMEOUT=${COMM_TIMEOUT:-120} \
      "$PROBE" "$mode" "$@" >"$WORK/$r.out" 2>&1 &
    RANK_PIDS+=($!)
  done
}

# wait_ranks: waits for every rank of start_ranks; sets RCS ("0 0", "1 1"...).
wait_ranks() {
  local pid rc
  RCS=""
  for pid in "${RANK_PIDS[@]}"; do
    wait "$pid"
    rc=$?
    RCS="${RCS:+$RCS }$rc"
  done
}
