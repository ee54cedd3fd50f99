#!/usr/bin/env bash
# hosts.sh: hosts simulated with Linux namespaces on this machine, for tests
# that need several nodes. Must run as root.
#
#   hosts.sh up N [--rate RATE] [--docker-bridge]
#                                 build hosts 0..N-1 (state in $COMM_HOSTS_DIR)
#   hosts.sh exec I CMD [ARG...]  run CMD on host I, in the current directory
#   hosts.sh link I up|down       bring host I's link to the bridge up or down
#                                 (as a pulled cable: its eth0 stays up)
#   hosts.sh down                 remove every namespace and process made by up
#   hosts.sh run N [up's options] -- CMD [ARG...]
#                                 up, run CMD here (COMM_HOSTS_DIR exported,
#                                 so that CMD can call exec), down; exits
#                                 with CMD's status
#
# Host I has its own network, UTS, IPC, mount and pid namespace (kept alive
# by a sleeper that is its pid 1), host name hostI, loopback and eth0 with
# 10.77.0.(I+1)/24, a veth link to a bridge that lives in a namespace of its
# own (so no test traffic touches this machine's own network), a private
# /dev/shm and an /etc/hosts as Debian writes one: its own name on
# 127.0.1.1, the other hosts on their 10.77.0.x addresses. --rate shapes
# both directions of each host's link (tc tbf, e.g. 500mbit or 10gbit).
# --docker-bridge gives every host, before eth0, a docker0 bridge with
# 172.17.0.1/16, as docker does: the same address on every host, reaching
# no other host.
#
# Removing a host kills its pid 1, which takes every process inside with it;
# its network namespace, and so its veth pair, goes with the last process.
# `run` removes the hosts however CMD ends, and a watchdog removes them if
# this script is killed outright. Exits 77 (CTest's skip code) with the
# reason when this kernel or user cannot make the namespaces.
set -euo pipefail

state=${COMM_HOSTS_DIR:-/run/comm-hosts}
self=$(readlink -f "$0")
# How long a new namespace may take to come up, or an old one to go away,
# before this script gives up: far beyond what either takes on a busy machine.
settle_seconds=30

usage() {
  sed -n '2,/^set /p' "$self" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

die() {
  echo "hosts.sh: $*" >&2
  exit 1
}

skip() {
  echo "hosts.sh: SKIPPED: $*" >&2
  exit 77
}

# Nothing is built when this machine cannot build it.
check_support() {
  [ "$(id -u)" -eq 0 ] || skip "simulated hosts need root (Linux namespaces, veth, bridge)"
  local tool
  for tool in ip nsenter unshare "$@"; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (Debian: iproute2, util-linux)"
  done
  local why
  if ! why=$(unshare --net --uts --ipc --mount --pid --fork --mount-proc \
    sh -c 'ip link add br0 type bridge && ip link add dev v0 type veth peer name v1' 2>&1); then
    skip "this kernel does not let root make network/pid/mount namespaces, bridges or veth links: $why"
  fi
}

# The pid of the process whose namespaces are host $1 (or "switch").
init_pid() {
  local file="$state/$1.pid"
  [ -f "$file" ] || die "no host $1 is up in $state (hosts.sh up N first)"
  cat "$file"
}

# Starts a sleeper as pid 1 of new namespaces and records its pid as $1.
start_namespaces() {
  local name=$1 outer inner="" waited=0
  unshare --net --uts --ipc --mount --pid --fork --kill-child --mount-proc sleep infinity \
    </dev/null >/dev/null 2>&1 &
  outer=$!
  # down kills it; the shell need not report that.
  disown "$outer"
  echo "$outer" >"$state/$name.unshare"
  # The sleeper runs once unshare has forked it and mounted its /proc;
  # entering before then would see the old /proc.
  while :; do
    # The file holds "PID " without a newline.
    inner=$(cat "/proc/$outer/task/$outer/children" 2>/dev/null || true)
    inner=${inner%% *}
    if [ -n "$inner" ] && [ "$(cat "/proc/$inner/comm" 2>/dev/null)" = sleep ]; then break; fi
    kill -0 "$outer" 2>/dev/null || die "unshare for $name exited before its namespaces were up"
    waited=$((waited + 1))
    [ "$waited" -lt $((settle_seconds * 20)) ] || die "namespaces for $name did not come up in ${settle_seconds}s"
    sleep 0.05
  done
  echo "$inner" >"$state/$name.pid"
}

in_ns() {
  local pid=$1
  shift
  nsenter -t "$pid" --net --uts --ipc --mount -- "$@"
}

host_hosts_file() {
  local i=$1 n=$2 j
  printf '127.0.0.1\tlocalhost\n127.0.1.1\thost%d\n' "$i"
  for ((j = 0; j < n; j++)); do
    [ "$j" -eq "$i" ] || printf '10.77.0.%d\thost%d\n' $((j + 1)) "$j"
  done
}

cmd_up() {
  local n="" rate="" docker=0
  while [ $# -gt 0 ]; do
    case $1 in
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --docker-bridge) docker=1; shift ;;
      *) n=$1; shift ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 250 ] || usage
  if [ -n "$rate" ]; then check_support tc; else check_support; fi
  if [ -f "$state/count" ]; then die "hosts are already up in $state; run hosts.sh down first"; fi
  mkdir -p "$state"
  echo "$n" >"$state/count"

  start_namespaces switch
  local sw i host
  sw=$(init_pid switch)
  in_ns "$sw" ip link add br0 type bridge
  in_ns "$sw" ip link set br0 up
  for ((i = 0; i < n; i++)); do
    start_namespaces "host$i"
    host=$(init_pid "host$i")
    in_ns "$host" hostname "host$i"
    if [ "$docker" -eq 1 ]; then
      in_ns "$host" ip link add docker0 type bridge
      in_ns "$host" ip addr add 172.17.0.1/16 dev docker0
      in_ns "$host" ip link set docker0 up
    fi
    in_ns "$sw" ip link add dev "port$i" type veth peer name eth0 netns "$host"
    in_ns "$sw" ip link set "port$i" master br0 up
    in_ns "$host" ip link set lo up
    in_ns "$host" ip addr add "10.77.0.$((i + 1))/24" dev eth0
    in_ns "$host" ip link set eth0 up
    if [ -n "$rate" ]; then
      # Egress of eth0 is what the host sends, egress of its bridge port what it receives.
      in_ns "$host" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms
      in_ns "$sw" tc qdisc add dev "port$i" root tbf rate "$rate" burst 256kb latency 50ms
    fi
    host_hosts_file "$i" "$n" >"$state/host$i.hosts"
    in_ns "$host" mount --bind "$state/host$i.hosts" /etc/hosts
    in_ns "$host" mount -t tmpfs -o mode=1777 tmpfs /dev/shm
  done
  # For up to about a second after eth0 comes up, libfabric's tcp provider
  # may not list it yet, and a rank started then finds no interface to the
  # other hosts: wait until it does (5 s at most).
  if command -v fi_info >/dev/null; then
    local try
    for ((i = 0; i < n; i++)); do
      host=$(init_pid "host$i")
      for ((try = 0; try < 50; try++)); do
        in_ns "$host" env FI_PROVIDER=tcp fi_info -p tcp 2>/dev/null | grep -q "domain: *eth0" && break
        sleep 0.1
      done
    done
  fi
}

cmd_exec() {
  [ $# -ge 2 ] || usage
  local i=$1
  shift
  local pid
  pid=$(init_pid "host$i")
  exec nsenter -t "$pid" --net --uts --ipc --mount --pid --wd="$PWD" -- "$@"
}

cmd_link() {
  [ $# -eq 2 ] && [[ $1 =~ ^[0-9]+$ ]] && [[ $2 =~ ^(up|down)$ ]] || usage
  init_pid "host$1" >/dev/null
  in_ns "$(init_pid switch)" ip link set "port$1" "$2"
}

cmd_down() {
  [ -d "$state" ] || return 0
  local file pid waited
  # Each sleeper is pid 1 of its namespace: killing it kills everything in it.
  for file in "$state"/*.pid "$state"/*.unshare; do
    [ -f "$file" ] || continue
    pid=$(cat "$file")
    kill -KILL "$pid" 2>/dev/null || true
  done
  for file in "$state"/*.pid "$state"/*.unshare; do
    [ -f "$file" ] || continue
    pid=$(cat "$file")
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
      waited=$((waited + 1))
      [ "$waited" -lt $((settle_seconds * 20)) ] || die "process $pid ($(basename "$file")) did not die"
      sleep 0.05
    done
  done
  rm -rf "$state"
}

cmd_run() {
  local up_args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    up_args+=("$1")
    shift
  done
  [ "${1:-}" = -- ] && [ $# -ge 2 ] || usage
  shift
  state=$(mktemp -d /tmp/comm-hosts.XXXXXX)
  rmdir "$state"
  export COMM_HOSTS_DIR=$state
  trap 'cmd_down' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # If this script is killed outright (a test runner's deadline), nothing
  # runs its trap: a detached watchdog notices and removes the hosts.
  local owner=$$
  (setsid bash -c '
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    [ -d "$2" ] && COMM_HOSTS_DIR=$2 "$3" down' watchdog "$owner" "$state" "$self" \
    </dev/null >/dev/null 2>&1 &)
  cmd_up "${up_args[@]}"
  local rc=0
  "$@" || rc=$?
  return "$rc"
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
  up) cmd_up "$@" ;;
  exec) cmd_exec "$@" ;;
  link) cmd_link "$@" ;;
  down) cmd_down ;;
  run) cmd_run "$@" ;;
  *) usage ;;
esac
