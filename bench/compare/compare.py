#!/usr/bin/python3
"""comm against Open MPI, MPICH and Gloo, side by side on this machine.

Started by compare.sh, which installs the packages and builds the programs.
Every system runs the same collectives at the same sizes with the same
timing rule (bench_common.h): float32, sum, root 0, nccl-tests sizes,
256 MiB worth of iterations per size (10..1000) after 5 warm-up, each
iteration timed on its own, the median per rank, the slowest rank's median.
The systems take turns: each round runs every (collective, system) pair once,
the systems in a rotated order, so that a change in the machine's load hits
all of them alike. The tables show each system's median over the rounds and
comm's speed ratio against it: their time / our time, which is our busbw /
their busbw; above 1 means comm is faster.
"""
import argparse
import datetime
import json
import os
import platform
import re
import selectors
import shlex
import signal
import statistics
import subprocess
import sys
import time

RANKS = 2
DEFAULT_SIZES = "8,64K,1M,4M,16M,64M"
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "gather", "scatter",
               "all_to_all", "barrier"]
# nccl-tests' busbw factors at RANKS ranks.
BUS_FACTOR = {"all_reduce": 2.0 * (RANKS - 1) / RANKS, "reduce": 1.0, "broadcast": 1.0, "barrier": 0.0}
for _c in ("all_gather", "reduce_scatter", "gather", "scatter", "all_to_all"):
    BUS_FACTOR[_c] = (RANKS - 1) / RANKS

# Freed memory stays with the process: without these, glibc serves every
# allocation of 32 MiB and more with a fresh mmap, and a library that
# allocates a temporary per call pays a page fault per 4 KiB page on every
# call, which at 32 MiB and more outweighs the collective itself. Given to
# every system alike.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "1073741824", "MALLOC_TRIM_THRESHOLD_": "4294967295"}
OMPI_BASE = ["--mca", "pml", "ob1"]
# Seconds a launch may take to exit after printing its last result; some
# stacks hang in finalize (MPICH with UCX_TLS=tcp after scatter, seen here).
EXIT_GRACE = 15


class System:
    def __init__(self, name, label, transport, kind, env=None, mpi_args=None, comm=False):
        self.name, self.label, self.transport, self.kind = name, label, transport, kind
        self.env = env or {}
        self.mpi_args = mpi_args or []
        self.comm = comm


SYSTEMS = [
    System("comm", "comm", "shm", "comm", comm=True),
    System("ompi", "Open MPI vader", "shm", "openmpi", mpi_args=OMPI_BASE + ["--mca", "btl", "self,vader"]),
    System("mpich", "MPICH ch4:ucx", "shm", "mpich"),
    System("gloo", "Gloo tcp", "both", "gloo"),
    System("comm-tcp", "comm tcp", "tcp", "comm", env={"COMM_PROVIDER": "tcp", "COMM_SHM": "0"}, comm=True),
    System("ompi-tcp", "Open MPI tcp BTL", "tcp", "openmpi",
           mpi_args=OMPI_BASE + ["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"]),
    System("mpich-tcp", "MPICH ucx tcp", "tcp", "mpich", env={"UCX_TLS": "tcp"}),
]


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KMG]?)(i?B)?", text.strip(), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError("'%s' is not a size (8, 64K, 1M...)" % text)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def size_name(b):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d %s" % (b >> shift, unit)
    return "%d B" % b


def machine_load(busy=True):
    """Load average and, when `busy`, the share of CPU time busy over one second."""
    def ticks():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    load = {"at": datetime.datetime.now().isoformat(timespec="seconds"), "busy_percent": None}
    if busy:
        t0, i0 = ticks()
        time.sleep(1.0)
        t1, i1 = ticks()
        load["busy_percent"] = round(100.0 * (1 - (i1 - i0) / max(1, t1 - t0)), 1)
    with open("/proc/loadavg") as f:
        load["loadavg"] = " ".join(f.read().split()[:3])
    return load


def load_text(load):
    busy = "" if load["busy_percent"] is None else ", CPU busy %.0f%%" % load["busy_percent"]
    return "loadavg %s%s" % (load["loadavg"], busy)


class Runner:
    def __init__(self, args):
        self.args = args
        self.log = open(os.path.join(args.outdir, "raw.log"), "a")
        self.failures = []
        self.notes = []
        base = {k: v for k, v in os.environ.items() if not k.startswith("COMM_")}
        base.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "COMM_TIMEOUT": "120"})
        self.base_env = base
        self.rank_env = {} if args.no_malloc_tuning else dict(MALLOC_ENV)
        # Open MPI refuses more ranks than cores unless told to oversubscribe.
        self.ompi_placement = ["--bind-to", "core"] if (os.cpu_count() or 1) >= RANKS else \
            ["--oversubscribe", "--bind-to", "none"]

    def command(self, system, collective, sizes, json_path):
        env = dict(self.rank_env, **system.env)
        size_list = ",".join(str(s) for s in sizes)
        if system.kind == "comm":
            env.update(self.args.comm_env if system.comm else {})
            argv = [self.args.commrun, "-n", str(RANKS), "--bind-core", "--timeout", str(self.args.timeout),
                    self.args.comm_bench, collective, "--sizes", size_list, "-n", "auto", "-w", "5", "-a", "max",
                    "-c", "1", "--json", json_path]
            return argv, env
        if system.kind == "openmpi":
            argv = ["mpirun.openmpi", "--allow-run-as-root", "-np", str(RANKS)] + self.ompi_placement + \
                system.mpi_args
            for k, v in env.items():
                argv += ["-x", "%s=%s" % (k, v)]
            return argv + [os.path.join(self.args.bin, "mpi_collectives.openmpi"), collective, size_list], {}
        if system.kind == "mpich":
            argv = ["mpirun.mpich", "-np", str(RANKS), "-bind-to", "core"]
            for k, v in env.items():
                argv += ["-genv", k, v]
            return argv + [os.path.join(self.args.bin, "mpi_collectives.mpich"), collective, size_list], {}
        return [os.path.join(self.args.bin, "gloo_collectives"), collective, size_list, str(RANKS)], env

    def launch(self, argv, env, finished):
        """Run argv in its own process group and return (output, status). Once
        finished(line) has seen the last result, the launch gets EXIT_GRACE
        seconds to exit before its whole group is killed (status "hung after
        its results"); at the timeout, status "timeout"."""
        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace", start_new_session=True)
        lines = []
        deadline = time.time() + self.args.timeout
        try:
            status = self.follow(p, lines, deadline, finished)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): its own session would outlive us.
            os.killpg(p.pid, signal.SIGKILL)
            raise
        finally:
            p.stdout.close()
        return "".join(lines), status

    @staticmethod
    def follow(p, lines, deadline, finished):
        results_at, status = None, None
        with selectors.DefaultSelector() as selector:
            selector.register(p.stdout, selectors.EVENT_READ)
            while status is None:
                limit = deadline if results_at is None else min(deadline, results_at + EXIT_GRACE)
                if time.time() >= limit:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                    status = "timeout" if results_at is None else "hung after its results"
                elif selector.select(timeout=min(1.0, limit - time.time())):
                    line = p.stdout.readline()
                    if line == "":
                        status = p.wait()
                    else:
                        lines.append(line)
                        if results_at is None and finished(line):
                            results_at = time.time()
        return status

    def run(self, system, collective, sizes):
        """{bytes: time_us} of one launch; {} when it failed (logged)."""
        json_path = os.path.join(self.args.outdir, "last-comm-bench.json")
        argv, env = self.command(system, collective, sizes, json_path)
        results = []

        def finished(line):
            if system.kind == "comm":
                return "Avg bus bandwidth" in line
            results.append(line.startswith("RESULT "))
            return sum(results) == len(sizes)

        started = time.time()
        out, rc = self.launch(argv, dict(self.base_env, **env), finished)
        elapsed = time.time() - started
        shown_env = " ".join("%s=%s" % kv for kv in sorted(env.items()))
        self.log.write("\n### %s %s  rc=%s  %.1f s\n$ %s %s\n%s" % (
            system.name, collective, rc, elapsed, shown_env, " ".join(shlex.quote(a) for a in argv), out))
        self.log.flush()
        if rc == "hung after its results":
            self.notes.append("%s %s: did not exit within %d s of its last result; killed, results kept" % (
                system.name, collective, EXIT_GRACE))
            rc = 0
        times = {}
        if system.kind == "comm":
            if rc == 0 and os.path.exists(json_path):
                with open(json_path) as f:
                    for row in json.load(f)["rows"]:
                        # MPI_Bcast and Gloo's broadcast are in place; so is the comm form compared with them.
                        m = row["in_place" if collective == "broadcast" else "out_of_place"]
                        if m is not None and m.get("wrong") in (0, None):
                            times[row["size"]] = m["time_us"]
            if os.path.exists(json_path):
                os.remove(json_path)
        else:
            for line in out.splitlines():
                f = line.split()
                if len(f) == 5 and f[0] == "RESULT" and f[1] == collective:
                    times[int(f[2])] = float(f[3])
        if rc != 0 or len(times) < len(sizes):
            self.failures.append("%s %s: rc=%s, %d of %d sizes (see raw.log)" % (
                system.name, collective, rc, len(times), len(sizes)))
        return times, elapsed


def median_or_none(values):
    return statistics.median(values) if values else None


def evaluate(systems, medians):
    """The issue's goals that this run measured: (goal, measured, met), for
    every comm system (comm, its --comm-variant ones, comm tcp)."""
    goals = []
    names = {s.name for s in systems}

    def m(system, collective, size):
        return medians.get(system, {}).get(collective, {}).get(size)

    def ratio(ours, collective, size, theirs):
        a, b = m(ours, collective, size), m(theirs, collective, size)
        return b / a if a and b else None

    for ours in [s for s in systems if s.comm and s.transport == "shm"]:
        who = "" if ours.name == "comm" else " (%s)" % ours.label
        r = ratio(ours.name, "all_reduce", 8, "ompi")
        if r is not None:
            goals.append(("shm all_reduce 8 B latency at most 1.0x Open MPI%s" % who, "%.2fx as fast" % r, r >= 1.0))
        for size in (1 << 20, 4 << 20, 16 << 20, 64 << 20):
            r = ratio(ours.name, "all_reduce", size, "ompi")
            if r is not None:
                goals.append(("shm all_reduce %s busbw at least 1.25x Open MPI%s" % (size_name(size), who),
                              "%.2fx" % r, r >= 1.25))
        peers = [n for n in ("ompi", "mpich", "gloo") if n in names]
        for collective in ("all_gather", "reduce_scatter", "broadcast", "reduce", "gather", "scatter", "all_to_all"):
            for size in (8, 64 << 10, 1 << 20, 64 << 20):
                theirs = [(m(p, collective, size), p) for p in peers if m(p, collective, size)]
                mine = m(ours.name, collective, size)
                if theirs and mine:
                    best, fastest = min(theirs)
                    goals.append(("shm %s %s at least 1.0x the best (%s)%s" % (
                        collective, size_name(size), fastest, who), "%.2fx" % (best / mine), best / mine >= 1.0))
    if "comm-tcp" in names:
        r = ratio("comm-tcp", "all_reduce", 8, "ompi-tcp")
        if r is not None:
            goals.append(("tcp all_reduce 8 B latency at most 1.0x Open MPI tcp", "%.2fx as fast" % r, r >= 1.0))
        r = ratio("comm-tcp", "all_reduce", 64 << 20, "ompi-tcp")
        if r is not None:
            goals.append(("tcp all_reduce 64 MiB busbw at least 1.2x Open MPI tcp", "%.2fx" % r, r >= 1.2))
        r = ratio("comm-tcp", "all_reduce", 64 << 20, "gloo")
        if r is not None:
            goals.append(("tcp all_reduce 64 MiB busbw at least 3x Gloo", "%.2fx" % r, r >= 3.0))
    return goals


def cell(time_us, size, collective, rounds_ok, rounds):
    if time_us is None:
        return "fail"
    text = "%.2f us" % time_us if time_us < 1e4 else "%.0f us" % time_us
    if size > 0 and BUS_FACTOR[collective] > 0:
        text += " (%.2f)" % (size / (time_us * 1e3) * BUS_FACTOR[collective])
    if rounds_ok < rounds:
        text += " [%d/%d]" % (rounds_ok, rounds)
    return text


def tables(args, systems, raw, medians, loads):
    """Markdown: per transport, median time (busbw GB/s) per system, and comm's ratios."""
    lines = []
    for transport in args.transports:
        ours = [s for s in systems if s.comm and s.transport == transport]
        theirs = [s for s in systems if not s.comm and s.transport in (transport, "both")]
        members = ours + theirs
        if not ours:
            continue
        lines.append("### %s, %d ranks: median of %d rounds" % (transport, RANKS, args.rounds))
        lines.append("")
        lines.append("Cells: time per call in us (busbw in GB/s). Ratios: their time / comm's time "
                     "(= comm's busbw / theirs); above 1.00 comm is faster.")
        lines.append("")
        header = ["collective", "size"] + [s.label for s in members] + \
            ["%s vs %s" % (o.label, t.label) for o in ours for t in theirs]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * 2 + "---:|" * (len(header) - 2))
        for collective in args.collectives:
            sizes = [0] if collective == "barrier" else args.sizes
            for size in sizes:
                row = [collective, size_name(size) if collective != "barrier" else "-"]
                for s in members:
                    got = raw.get(s.name, {}).get(collective, {}).get(size, [])
                    row.append(cell(medians[s.name][collective].get(size), size, collective, len(got), args.rounds))
                for o in ours:
                    for t in theirs:
                        a, b = medians[o.name][collective].get(size), medians[t.name][collective].get(size)
                        row.append("%.2fx" % (b / a) if a and b else "-")
                lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines.append("Machine load (loadavg over 1/5/15 min; CPU busy over 1 s, idle between launches):")
    lines.append("")
    for name, load in loads:
        lines.append("- %s (%s): %s" % (name, load["at"], load_text(load)))
    lines.append("")
    return lines


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--collectives", default=",".join(COLLECTIVES), help="comma list (default: all)")
    p.add_argument("--sizes", default=DEFAULT_SIZES, help="comma list of nccl-tests sizes (default %(default)s)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of alternation (default %(default)s)")
    p.add_argument("--transports", default="shm,tcp", help="shm, tcp or both (default %(default)s)")
    p.add_argument("--systems", default=",".join(s.name for s in SYSTEMS),
                   help="subset of %(default)s")
    p.add_argument("--comm-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for comm's ranks (repeatable), e.g. COMM_ALGO=all_reduce:ring")
    p.add_argument("--comm-variant", action="append", default=[], metavar="NAME:KEY=VALUE[,KEY=VALUE]",
                   help="one more comm system on shm, with this environment (repeatable), e.g. "
                        "direct:COMM_SHM=1 to compare a change side by side")
    p.add_argument("--no-malloc-tuning", action="store_true",
                   help="do not pass MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ to the ranks")
    p.add_argument("--timeout", type=int, default=300, help="seconds one launch may take (default %(default)s)")
    p.add_argument("--from-results", metavar="RESULTS_JSON",
                   help="measure nothing: print the tables of an earlier run again (and rewrite its report.md)")
    p.add_argument("--comm-build", required=True, help="comm build directory (commrun, comm-bench)")
    p.add_argument("--bin", required=True, help="where compare.sh built the MPI and Gloo programs")
    p.add_argument("--outdir", required=True, help="where raw.log, the JSON, markdown and plots go")
    args = p.parse_args()
    comm_bench = os.path.join(args.comm_build, "tools", "comm-bench", "comm-bench")
    if args.from_results:
        with open(args.from_results) as f:
            report(json.load(f), os.path.dirname(os.path.abspath(args.from_results)), comm_bench)
        return 0
    args.collectives = [c for c in args.collectives.split(",") if c]
    for c in args.collectives:
        if c not in COLLECTIVES:
            p.error("unknown collective %s (one of %s)" % (c, ", ".join(COLLECTIVES)))
    args.sizes = sorted({parse_size(s) for s in args.sizes.split(",") if s})
    args.transports = [t for t in args.transports.split(",") if t]
    args.comm_env = dict(kv.split("=", 1) for kv in args.comm_env)
    args.commrun = os.path.join(args.comm_build, "tools", "commrun", "commrun")
    args.comm_bench = comm_bench
    wanted = set(args.systems.split(","))
    unknown = wanted - {s.name for s in SYSTEMS}
    if unknown:
        p.error("unknown systems %s" % ", ".join(sorted(unknown)))
    systems = [s for s in SYSTEMS if s.name in wanted and (s.transport in args.transports or
                                                             (s.transport == "both" and args.transports))]
    for variant in args.comm_variant:
        name, _, settings = variant.partition(":")
        env = dict(kv.split("=", 1) for kv in settings.split(",") if "=" in kv)
        if not name or not env:
            p.error("--comm-variant wants NAME:KEY=VALUE[,KEY=VALUE], got '%s'" % variant)
        systems.insert(1, System("comm-" + name, "comm " + name, "shm", "comm", env=env, comm=True))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.outdir = os.path.join(args.outdir, stamp)
    os.makedirs(args.outdir, exist_ok=True)
    runner = Runner(args)

    loads = [("before", machine_load())]
    print("# comm vs Open MPI / MPICH / Gloo, %d ranks; results in %s" % (RANKS, args.outdir))
    print("# systems: %s; collectives: %s; sizes: %s; %d rounds" % (
        ", ".join(s.name for s in systems), ",".join(args.collectives),
        ",".join(size_name(s) for s in args.sizes), args.rounds))
    print("# load before: %s (other processes distort every number; ratios within one run are what count)"
          % load_text(loads[0][1]), flush=True)
    raw = {s.name: {c: {} for c in args.collectives} for s in systems}
    started = time.time()
    for r in range(args.rounds):
        for collective in args.collectives:
            sizes = [0] if collective == "barrier" else args.sizes
            order = systems[r % len(systems):] + systems[:r % len(systems)]
            spent = []
            for s in order:
                times, elapsed = runner.run(s, collective, sizes)
                for size, t in times.items():
                    raw[s.name][collective].setdefault(size, []).append(t)
                spent.append("%s %.0fs%s" % (s.name, elapsed, "" if len(times) == len(sizes) else " FAILED"))
            print("[round %d/%d, %4.0f s] %-14s %s" % (r + 1, args.rounds, time.time() - started, collective,
                                                         ", ".join(spent)), flush=True)
        loads.append(("after round %d" % (r + 1), machine_load(busy=False)))
    loads.append(("after", machine_load()))

    run = {"stamp": stamp, "command": os.environ.get("COMPARE_COMMAND", "compare.py " + shlex.join(sys.argv[1:])),
           "collectives": args.collectives, "sizes": args.sizes, "rounds": args.rounds,
           "transports": args.transports, "loads": loads, "failures": runner.failures, "notes": runner.notes,
           "systems": [{"name": s.name, "label": s.label, "transport": s.transport, "comm": s.comm,
                        "env": s.env} for s in systems],
           "times_us": raw}
    report(run, args.outdir, args.comm_bench)
    print("# %.0f s; raw output: %s" % (time.time() - started, os.path.join(args.outdir, "raw.log")))
    return 1 if runner.failures else 0


def report(run, outdir, comm_bench):
    """Print the tables of `run` (what main measured, or a results.json read
    back) and write report.md, results.json and the plots into outdir."""
    systems = [System(s["name"], s["label"], s["transport"], "comm" if s["comm"] else "", env=s["env"],
                      comm=s["comm"]) for s in run["systems"]]
    args = argparse.Namespace(collectives=run["collectives"], sizes=run["sizes"], rounds=run["rounds"],
                              transports=run["transports"], comm_bench=comm_bench)
    # JSON object keys are strings: sizes come back as such.
    raw = {s: {c: {int(size): v for size, v in per.items()} for c, per in colls.items()}
           for s, colls in run["times_us"].items()}
    medians = {s: {c: {size: median_or_none(v) for size, v in per.items()} for c, per in colls.items()}
               for s, colls in raw.items()}
    goals = evaluate(systems, medians)
    md = ["## Side-by-side run %s" % run["stamp"], "", "Command: `%s`" % run["command"], ""]
    md += tables(args, systems, raw, medians, run["loads"])
    if goals:
        md += ["Goals measured in this run:", "", "| goal | measured | met |", "|---|---:|---|"]
        md += ["| %s | %s | %s |" % (g, v, "yes" if ok else "**no**") for g, v, ok in goals]
        md.append("")
    if run["failures"]:
        md += ["Failed launches:", ""] + ["- " + f for f in run["failures"]] + [""]
    if run["notes"]:
        md += ["Notes:", ""] + ["- " + n for n in sorted(set(run["notes"]))] + [""]
    text = "\n".join(md)
    print()
    print(text)
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(dict(run, machine=platform.node(), medians_us=medians,
                       goals=[{"goal": g, "measured": v, "met": ok} for g, v, ok in goals]), f, indent=1)
    if os.path.exists(comm_bench):
        plot(args, systems, medians, outdir)


def plot(args, systems, medians, outdir):
    """all_reduce busbw against size per transport, drawn by comm-bench --plot from
    CSV files in comm-bench's format (one per system)."""
    if "all_reduce" not in args.collectives or len(args.sizes) < 2:
        return
    header = ("size,count,type,redop,root,time_us,algbw_gbps,busbw_gbps,wrong,"
              "in_place_time_us,in_place_algbw_gbps,in_place_busbw_gbps,in_place_wrong")
    for transport in args.transports:
        files = []
        for s in systems:
            if s.transport not in (transport, "both"):
                continue
            path = os.path.join(outdir, "all_reduce-%s-%s.csv" % (transport, s.name))
            with open(path, "w") as f:
                f.write(header + "\n")
                for size in args.sizes:
                    t = medians.get(s.name, {}).get("all_reduce", {}).get(size)
                    if t:
                        algbw = size / (t * 1e3)
                        f.write("%d,%d,float32,sum,-1,%s,%s,%s,,,,,\n" % (
                            size, size // 4, t, algbw, algbw * BUS_FACTOR["all_reduce"]))
            files.append(path)
        png = os.path.join(outdir, "all_reduce-%s.png" % transport)
        subprocess.run([args.comm_bench, "--plot", png] + files, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    sys.exit(main())
