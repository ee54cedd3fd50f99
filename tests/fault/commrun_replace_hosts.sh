# commrun --hosts --replace: each host's commrun replaces its own failed
# ranks, and the job's store hands out launch slots, so that two hosts'
# replacements never share one.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/agent" <<'AGENT'
#!/bin/sh
echo "$2" >>"${0%/*}/agent.lines"
exec sh -c "$2"
AGENT
chmod +x "$WORK/agent"
port=$("$PROBE" free-port)
# Every first rank meets the others through the store, then fails.
run_commrun -n 1 --hosts here,there --launcher-agent "$WORK/agent" --master-addr 127.0.0.1 --master-port "$port" \
  --replace 1 --timeout 60 sh -c '
  if [ -n "${COMM_JOIN:-}" ]; then echo "joined slot $COMM_LAUNCH_SLOT rank $COMM_RANK"; exit 0; fi
  "$0" rendezvous >/dev/null && exit 3' "$PROBE"
expect_rc 0
grep -c "'--replace' '1'" "$WORK/agent.lines" | grep -qx 2 || fail "--replace 1 was not passed to both hosts' commruns"
joined=$(grep -E '^\[[23]\] joined slot [23] rank [01]$' "$WORK/out" | sort)
case "$joined" in
  "[2] joined slot 2 rank 0"$'\n'"[3] joined slot 3 rank 1" | "[2] joined slot 2 rank 1"$'\n'"[3] joined slot 3 rank 0") ;;
  *) fail "the two replacements did not take slots 2 and 3, one per rank: $joined" ;;
esac
[ "$(grep -c 'all replaced (--replace 1), and every launch slot' "$WORK/err")" = 2 ] \
  || fail "not both hosts' commruns said their failure was replaced"
grep -q 'could not record' "$WORK/err" && fail "a commrun could not record the failure or --keep-going in the store"
exit 0
