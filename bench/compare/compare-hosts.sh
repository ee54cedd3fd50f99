#!/usr/bin/env bash
# compare-hosts.sh - comm against Open MPI across hosts: all_reduce (or
# COLLECTIVE: all_gather, reduce_scatter, all_to_all) on hosts simulated with namespaces
# (tests/multihost/hosts.sh: each host its own network, joined through a
# bridge by veth links that tc shapes to RATE).
#
#   bench/compare/compare-hosts.sh HOSTS RATE [ROUNDS [SIZES [COLLECTIVE]]]
#   bench/compare/compare-hosts.sh 2 500mbit 3 8,1M,64M
#   bench/compare/compare-hosts.sh 2 500mbit 3 1M,64M all_gather
#   bench/compare/compare-hosts.sh 2 500mbit 3 64,64K,16M all_to_all
#
# 2 ranks per host (RANKS_PER_HOST=N for N). comm: one commrun per host running comm-bench (the
# store on host0, the default network transport; COMM_* variables given to
# this script reach the ranks, e.g. COMM_ALGO=all_reduce:ring for the flat
# ring). Open MPI: mpirun on host0 (its network; this machine's
# filesystem), starting its daemon on the other hosts through
# --mca plm_rsh_agent (an agent that enters the host's namespaces, as ssh
# would log in), btl tcp,vader,self on eth0, mpi_yield_when_idle=1 as 2
# cores carry 4 or 8 ranks. The systems alternate round by round; each
# result is the slowest rank's median time per call (comm-bench -a max, the
# same measure as bench/compare/mpi_collectives.c), and the table shows the
# median over the rounds, their ratio, and the link limit: the bytes each
# host must send at least, at RATE: 2(H-1)/H x size for all_reduce,
# (H-1)/H x size for all_gather (size: the whole output) and
# reduce_scatter (the whole input), 2(H-1)/H x size for all_to_all (each
# rank's whole input; a host's 2 ranks send (H-1)/H of theirs away).
# Needs root; a built comm in $COMM_BUILD_DIR (default build/); installs
# openmpi-bin and libopenmpi-dev when missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
hosts_sh=$repo/tests/multihost/hosts.sh
build=${COMM_BUILD_DIR:-$repo/build}

if [ "${1:-}" != --inside ]; then
  [ $# -ge 2 ] && [[ $1 =~ ^[0-9]+$ ]] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
  missing=""
  for p in openmpi-bin libopenmpi-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
  for tool in tools/commrun/commrun tools/comm-bench/comm-bench; do
    [ -x "$build/$tool" ] || { echo "compare-hosts.sh: $build/$tool is missing: build comm first" >&2; exit 1; }
  done
  mkdir -p "$build/compare/bin"
  mpi_bench=$build/compare/bin/mpi_collectives.openmpi
  if [ ! -x "$mpi_bench" ] || [ "$here/mpi_collectives.c" -nt "$mpi_bench" ]; then
    mpicc.openmpi -O2 -std=gnu11 -Wall -Wextra "$here/mpi_collectives.c" -o "$mpi_bench"
  fi
  exec "$hosts_sh" run "$1" --rate "$2" -- "$0" --inside "$@"
fi
shift
hosts=$1 rate=$2 rounds=${3:-3} sizes=${4:-8,1M,64M} collective=${5:-all_reduce}
case $collective in
  all_reduce | all_gather | reduce_scatter | all_to_all) ;;
  *) echo "compare-hosts.sh: COLLECTIVE is all_reduce, all_gather, reduce_scatter or all_to_all, not $collective" >&2
     exit 2 ;;
esac
ranks=${RANKS_PER_HOST:-2}
out=$build/compare/hosts-$(date +%Y%m%d-%H%M%S)-$collective-h${hosts}x${ranks}-$rate
mkdir -p "$out"
agent=$out/ompi-agent.sh
# Open MPI calls its agent as ssh: HOST COMMAND-WORDS...; the words make
# one shell command line on the other side.
cat >"$agent" <<AGENT
#!/usr/bin/env bash
host=\$1; shift
exec "$hosts_sh" exec "\$((\${host##*.} - 1))" sh -c "\$*"
AGENT
chmod +x "$agent"
host_list=""
for ((i = 0; i < hosts; i++)); do host_list+="${host_list:+,}10.77.0.$((i + 1)):$ranks"; done
COMM_JOB_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export COMM_JOB_SECRET

# Each host's kernel remembers, per peer address, what its TCP connections
# learned (ip tcp_metrics: a congestion window, a reordering degree); a
# new connection starts from it, so a run would inherit the last one's
# luck. Every run starts from none.
forget_tcp_metrics() {
  local i
  for ((i = 0; i < hosts; i++)); do "$hosts_sh" exec "$i" ip tcp_metrics flush all 2>/dev/null || true; done
}

run_comm() { # round
  local pids=() i
  forget_tcp_metrics
  for ((i = 0; i < hosts; i++)); do
    "$hosts_sh" exec "$i" env COMM_TIMEOUT=300 "$build/tools/commrun/commrun" -n "$ranks" --nnodes "$hosts" \
      --node-rank "$i" --master-addr 10.77.0.1 --master-port 29500 --timeout 900 \
      "$build/tools/comm-bench/comm-bench" "$collective" --sizes "$sizes" -n auto -w 3 -a max -c 1 \
      --json "$out/comm.$1.json" >"$out/comm.$1.host$i.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || echo "comm round $1: a host's commrun failed (see $out)"; done
}

run_ompi() { # round
  forget_tcp_metrics
  nsenter -t "$(cat "$COMM_HOSTS_DIR/host0.pid")" --net --uts -- \
    env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --host "$host_list" \
    --oversubscribe --bind-to none --mca plm_rsh_agent "$agent" --mca btl tcp,vader,self \
    --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1 \
    "$build/compare/bin/mpi_collectives.openmpi" "$collective" "$sizes" >"$out/ompi.$1.log" 2>&1 ||
    echo "ompi round $1 failed (see $out/ompi.$1.log)"
}

for ((round = 1; round <= rounds; round++)); do
  echo "# round $round of $rounds"
  run_comm "$round"
  run_ompi "$round"
done

/usr/bin/python3 - "$out" "$hosts" "$ranks" "$rate" "$rounds" "$sizes" "$collective" <<'REPORT' | tee "$out/report.md"
import glob, json, os, re, statistics, sys
out, hosts, ranks, rate, rounds, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
collective = sys.argv[7]
share = (2 if collective == "all_reduce" else ranks if collective == "all_to_all" else 1) * (hosts - 1) / hosts
comm, ompi = {}, {}
for path in glob.glob(os.path.join(out, "comm.*.json")):
    for row in json.load(open(path))["rows"]:
        m = row["out_of_place"]
        if m and m.get("wrong") in (0, None):
            comm.setdefault(row["size"], []).append(m["time_us"])
for path in glob.glob(os.path.join(out, "ompi.*.log")):
    for line in open(path):
        f = line.split()
        if len(f) == 5 and f[0] == "RESULT":
            ompi.setdefault(int(f[2]), []).append(float(f[3]))
units = {"k": 1e3, "m": 1e6, "g": 1e9}
m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate.lower())
bits_per_s = float(m.group(1)) * units.get(m.group(2), 1) if m else None
cmd = ("" if ranks == 2 else f"RANKS_PER_HOST={ranks} ") + " ".join(["bench/compare/compare-hosts.sh", str(hosts), rate, str(rounds), sizes]
               + ([collective] if collective != "all_reduce" else []))
print(f"### {collective} float32, {hosts} hosts x {ranks} ranks, links at {rate}: median of {rounds} rounds")
settings = " ".join(f"{k}={os.environ[k]}" for k in ("COMM_ALGO", "COMM_PROVIDER") if os.environ.get(k))
print(f"`{cmd}`" + (f" with {settings}" if settings else ""))
print()
print("| size | comm (us) | Open MPI (us) | Open MPI / comm | link limit (us) | comm / limit |")
print("|---:|---:|---:|---:|---:|---:|")
def fmt(v):
    return "-" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.1f}"
for size in sorted(set(comm) | set(ompi)):
    c = statistics.median(comm[size]) if size in comm else None
    o = statistics.median(ompi[size]) if size in ompi else None
    limit = share * size * 8 / bits_per_s * 1e6 if bits_per_s else None
    ratio = f"{o / c:.2f}" if c and o else "-"
    over = f"{c / limit:.2f}" if c and limit and size >= 1 << 20 else "-"
    print(f"| {size} | {fmt(c)} | {fmt(o)} | {ratio} | {fmt(limit) if size >= 1 << 20 else '-'} | {over} |")
REPORT
echo "# results in $out"
