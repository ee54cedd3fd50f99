#!/usr/bin/env bash
# hosts.sh leaves nothing behind: after `run` whose command fails, and after
# `run` is killed with SIGKILL (its watchdog then cleans up), no process it
# made (the namespaces' sleepers, a process started on a host) is alive, no
# network namespace of its hosts or switch exists any more, and its state
# directory is gone. Also checks what a host is: its name, address, the
# other hosts by name, that it reaches them, and that --rate shapes its
# link. Exits 77 where hosts.sh cannot make hosts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
hosts="$here/hosts.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Far beyond what cleaning up takes; the watchdog looks once a second.
deadline_seconds=60

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Run inside `hosts.sh run`: record what exists, start a process on host 1,
# then end as $1 says ("fail": exit 3; "hang": wait to be killed).
if [ "${1:-}" = --inside ]; then
  cp "$COMM_HOSTS_DIR"/*.pid "$COMM_HOSTS_DIR"/*.unshare "$2/" || exit 90
  echo "$COMM_HOSTS_DIR" >"$2/state"
  for file in "$COMM_HOSTS_DIR"/*.pid; do readlink "/proc/$(cat "$file")/ns/net"; done >"$2/netns"
  "$hosts" exec 1 sleep 1000 &
  echo $! >"$2/on_host.pid"
  "$hosts" exec 0 hostname >"$2/hostname"
  "$hosts" exec 1 getent hosts host0 host1 >"$2/getent"
  "$hosts" exec 1 ip -4 -o addr show dev eth0 >"$2/addr"
  "$hosts" exec 1 tc qdisc show dev eth0 >"$2/qdisc"
  "$hosts" exec 1 timeout 20 bash -c 'exec 3<>/dev/tcp/host0/9' >"$2/connect" 2>&1
  echo $? >>"$2/connect"
  if [ "$3" = fail ]; then exit 3; fi
  echo $$ >"$2/inside.pid"
  touch "$2/ready"
  exec sleep 1000
fi

# expect_gone DIR: nothing recorded in DIR is alive or exists any more.
expect_gone() {
  local dir=$1 waited=0 file pid left
  while :; do
    left=()
    for file in "$dir"/*.pid "$dir"/*.unshare; do
      pid=$(cat "$file")
      if [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
        left+=("process $pid ($(basename "$file"))")
      fi
    done
    # A network namespace exists while any process is in it.
    find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/net' -printf '%l\n' 2>/dev/null | sort -u >"$dir/netns.now"
    while read -r ns; do left+=("namespace $ns"); done < <(sort -u "$dir/netns" | comm -12 - "$dir/netns.now")
    [ -e "$(cat "$dir/state")" ] && left+=("state directory $(cat "$dir/state")")
    [ ${#left[@]} -eq 0 ] && return 0
    waited=$((waited + 1))
    [ "$waited" -lt $((deadline_seconds * 10)) ] || fail "left behind: ${left[*]}"
    sleep 0.1
  done
}

# 1. The command fails: run exits with its status and removes everything.
mkdir "$work/fail"
"$hosts" run 2 --rate 1gbit -- "$0" --inside "$work/fail" fail
rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 3 ] || fail "hosts.sh run exited $rc, expected the command's 3"
[ "$(cat "$work/fail/hostname")" = host0 ] || fail "host 0 is called '$(cat "$work/fail/hostname")'"
grep -qE '^10\.77\.0\.1 +host0$' "$work/fail/getent" || fail "host 1 does not resolve host0 to 10.77.0.1"
grep -qE '^127\.0\.1\.1 +host1$' "$work/fail/getent" || fail "host 1 does not map its own name to 127.0.1.1"
grep -q '^qdisc tbf .* rate 1Gbit' "$work/fail/qdisc" || fail "host 1's eth0 is not shaped: $(cat "$work/fail/qdisc")"
grep -q 'inet 10\.77\.0\.2/24' "$work/fail/addr" || fail "host 1's eth0 is not 10.77.0.2/24: $(cat "$work/fail/addr")"
# Port 9 has no listener: "refused" proves host 0 answered across the bridge.
grep -q 'Connection refused' "$work/fail/connect" || fail "host 1 did not reach host 0: $(cat "$work/fail/connect")"
expect_gone "$work/fail"

# 2. run is killed outright: no trap runs; the watchdog removes the hosts.
mkdir "$work/kill"
"$hosts" run 2 -- "$0" --inside "$work/kill" hang &
runner=$!
waited=0
until [ -f "$work/kill/ready" ]; do
  kill -0 "$runner" 2>/dev/null || fail "hosts.sh run ended before its command was ready"
  waited=$((waited + 1))
  [ "$waited" -lt $((deadline_seconds * 10)) ] || fail "the command inside hosts.sh run never got ready"
  sleep 0.1
done
kill -KILL "$runner"
# The command ran outside the hosts, as run's child; it is ours to stop.
kill -KILL "$(cat "$work/kill/inside.pid")"
wait "$runner" 2>/dev/null
expect_gone "$work/kill"
echo "hosts.sh cleaned up after a failed command and after being killed"
