#!/usr/bin/env bash
# Where the microseconds a profiled launch adds over a bare one go, by boundary and by cause.
#
# Each round runs, interleaved: launchprof (default observer) on Programs/libc-only.c, then
# hyperfine -N on a byte-identical copy of it (another inode: no probe of launchprof's is on the
# copy, so the bare side pays none of the program's probes; ld.so's and libc's probes, which a
# lingering lp-uprobe-hold keeps in every process of the machine, both sides pay alike), then
# hyperfine -N on the probed file itself. Every side runs under `perf record -a` on the
# scheduler's fork/exec/exit tracepoints and the wait syscalls' returns, so each launch is cut at
# the same kernel boundaries on both sides:
#   fork → exec      the spawn path and the exec (the kernel maps the program and ld.so here)
#   exec → exit      the loader and the program (the exec stop, probe hits, libc's mapping)
#   exit → reaped    the exit until the parent's wait returns
# A launch is the sum of the three boundaries' medians (each median over a round's launches).
# Causes: the probe hits and the exec stop's handling from launchprof's own report (observerNs,
# tracerPauseNs); a stop's kernel part and a CPU-mask change from Programs/stop-costs.c; the
# uprobes' installation into a new mapping from Programs/uprobe-install.c (map+unmap of the probed
# file minus its copy's); the reaping from the trace. The probed file minus its copy, both bare,
# is printed as a cross-check. What the causes do not cover is printed as unexplained.
#
#   Benchmarks/overhead-accounting.sh [RUNS-PER-ROUND] [ROUNDS]     (default 60 and 6)
# Environment: LAUNCHPROF_BIN; PIN_CPU=N pins every side alike (default: none, as users run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs="${1:-60}"
rounds="${2:-6}"
. "$here/lib/launchprof-binary.sh"
find_launchprof overhead-accounting
require_tools overhead-accounting hyperfine perf python3
pin=()
if [ "${PIN_CPU:-none}" != none ]; then pin=(taskset -c "$PIN_CPU"); fi
unset LD_PRELOAD LD_AUDIT LAUNCHPROF_HOOK_FD

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -g -o "$work/libc-only" "$here/Programs/libc-only.c"
cp "$work/libc-only" "$work/libc-bare"
cc -O2 -o "$work/stop-costs" "$here/Programs/stop-costs.c"
cc -O2 -o "$work/uprobe-install" "$here/Programs/uprobe-install.c"
events=sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit,syscalls:sys_exit_wait4,syscalls:sys_exit_waitid

traced() { # NAME COMMAND… : the command under perf record, its trace as text
    local name="$1"; shift
    perf record -q -a -o "$work/$name.data" -e "$events" -- "${pin[@]}" "$@" >/dev/null 2>"$work/$name.err" \
        || { echo "overhead-accounting: $name failed: $(tail -3 "$work/$name.err")" >&2; exit 2; }
    perf script --ns -i "$work/$name.data" -F comm,pid,tid,time,event,trace > "$work/$name.txt" 2>/dev/null
    rm -f "$work/$name.data"
}

echo "start: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)   $rounds rounds of $runs runs   pinned: ${PIN_CPU:-none}   $launchprof"
"$launchprof" run -r 3 "$work/libc-only" >/dev/null 2>&1 || true   # the holder's probes and calibration exist before round 1
for round in $(seq "$rounds"); do
    traced "profiled-$round" "$launchprof" run -r "$runs" -w 1 --json "$work/profiled-$round.json" "$work/libc-only"
    traced "bare-$round" hyperfine -N -w 1 -r "$runs" "$work/libc-bare"
    traced "probed-$round" hyperfine -N -w 1 -r "$runs" "$work/libc-only"
done
echo "end: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/stop-costs" > "$work/stop-costs.txt"
# Installing the probes into one new mapping, per probed file of the launch (the copies: other inodes).
ldso=$(readlink -f /lib64/ld-linux-x86-64.so.2); libc=$(ldd "$work/libc-only" | awk '/libc.so/ {print $3}')
cp "$ldso" "$work/ld-copy"; cp "$libc" "$work/libc-copy"
{ "$work/uprobe-install" "$work/libc-only" "$work/libc-bare"; "$work/uprobe-install" "$ldso" "$work/ld-copy"
  "$work/uprobe-install" "$libc" "$work/libc-copy"; } > "$work/install.txt"
cat "$work/install.txt"

python3 - "$work" "$rounds" <<'PY'
import json, re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
med = lambda v: statistics.median(v) if v else float("nan")
line = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)$")

def launches(name, program):
    """Per launch of PROGRAM in a trace: fork→exec, exec→exit, exit→reaped, fork→reaped (ns)."""
    fork, exec_, exit_, reaped = {}, {}, {}, {}
    for text in open(f"{work}/{name}.txt"):
        m = line.match(text)
        if not m: continue
        _, pid, tid, t, event, fields = m.groups()
        t = round(float(t) * 1e9)
        if event == "sched:sched_process_fork":
            child = int(re.search(r"child_pid=(\d+)", fields).group(1)); fork[child] = t
        elif event == "sched:sched_process_exec":
            if fields.startswith(f"filename={program} "): exec_[int(tid)] = t
        elif event == "sched:sched_process_exit":
            exit_.setdefault(int(tid), t)
        elif event in ("syscalls:sys_exit_wait4", "syscalls:sys_exit_waitid"):
            try: r = int(fields.strip(), 16)
            except ValueError: continue
            if r > 0: reaped.setdefault(r, []).append(t)   # a traced child's stops return here too
    out = []
    for pid, e in exec_.items():
        if pid in fork and pid in exit_:
            f, x = fork[pid], exit_[pid]
            w = min((t for t in reaped.get(pid, []) if t >= x), default=None)
            out.append((e - f, x - e, w - x if w else None, w - f if w else None))
    return out

cols = ["fork → exec", "exec → exit", "exit → reaped", "sum"]
rows = {side: [[] for _ in cols] for side in ("profiled", "bare", "probed")}
report = {"hits": [], "hitNs": [], "pause": [], "exitNs": []}
print(f"{'round':6}" + "".join(f"{c + ' (p/b) µs':>26}" for c in cols) + f"{'probed−bare µs':>16}")
for r in range(1, rounds + 1):
    per = {}
    for side, program in (("profiled", "libc-only"), ("bare", "libc-bare"), ("probed", "libc-only")):
        ls = launches(f"{side}-{r}", f"{work}/{program}")
        per[side] = [med([l[i] for l in ls if l[i] is not None]) for i in range(3)]
        per[side].append(sum(per[side]))   # the boundaries' medians summed: robust to a slow spell in one of them
        for i in range(4): rows[side][i].append(per[side][i])
    print(f"{r:<6}" + "".join(f"{per['profiled'][i]/1e3:>12.1f} /{per['bare'][i]/1e3:>10.1f}  " for i in range(4))
          + f"{(per['probed'][3]-per['bare'][3])/1e3:>16.1f}")
    for run in json.load(open(f"{work}/profiled-{r}.json"))["runs"]:
        report["pause"].append(run.get("tracerPauseNs", 0)); report["exitNs"].append(run["metrics"]["exitNs"])
        # observerNs holds the exec stop's pause too (in loader.map): the hits are the rest.
        report["hitNs"].append(sum(p.get("observerNs", 0) for p in run["phases"] if p["durationNs"] > 0 and p["name"] != "extendedLaunch")
                               - run.get("tracerPauseNs", 0))

m = {side: [med(rows[side][i]) for i in range(4)] for side in rows}
print("\nmedians of the rounds' medians (µs): boundary, profiled, bare, added")
for i, c in enumerate(cols):
    print(f"  {c:16} {m['profiled'][i]/1e3:9.1f} {m['bare'][i]/1e3:9.1f} {(m['profiled'][i]-m['bare'][i])/1e3:+9.1f}")
added = m["profiled"][3] - m["bare"][3]

stop = open(f"{work}/stop-costs.txt").read()
same = re.search(r"tracer CPU 0, child CPU 0: the child loses (\d+) ns per stop; the tracer handles it in (\d+) ns", stop)
affinity = re.search(r"sched_setaffinity on the stopped child \(restoring its mask\): (\d+) ns", stop)
reap = re.search(r"exit → waitpid returns, untraced child: (\d+) ns\s+exit → waitpid returns, traced child: (\d+) ns", stop)
stop_kernel = int(same.group(1)) - int(same.group(2)) if same else float("nan")
affinity_ns = int(affinity.group(1)) if affinity else float("nan")
hits, pause = med(report["hitNs"]), med(report["pause"])
installs = [int(l.split("probes installed: ")[1].split()[0]) for l in open(f"{work}/install.txt")]
probed = med([p - b for p, b in zip(rows["probed"][3], rows["bare"][3])])
causes = [
    ("exec stop: launchprof's handling (tracerPauseNs)", pause, "exec → exit"),
    ("exec stop: trap and two same-CPU switches (stop-costs.c)", stop_kernel, "exec → exit"),
    ("probe hits × calibrated cost (observerNs)", hits, "exec → exit"),
    ("uprobes installed in the program's mapping (uprobe-install.c)", installs[0], "fork → exec"),
    # The child inherits the pinned tracer thread's mask (no call of its own); the restore follows
    # the exec stop's continue while the child waits on the tracer's CPU (RESULTS §19).
    ("CPU mask: restored as the exec stop ends (stop-costs.c)", affinity_ns, "exec → exit"),
    ("reaping: exit → reaped, profiled − bare (trace)", m["profiled"][2] - m["bare"][2], "exit → reaped"),
]
print(f"\ncause (µs per launch; median exitNs {med(report['exitNs'])/1e3:.1f} µs, added over the boundaries {added/1e3:+.1f} µs)")
explained = 0
for what, ns, where in causes:
    explained += ns
    print(f"  {what:74} {ns/1e3:+8.1f}   ({where})")
print(f"  {'unexplained (added − the causes above)':74} {(added-explained)/1e3:+8.1f}")
print(f"paid by both sides while a holder lingers (not in the added time): probes installed in ld.so's mapping {installs[1]/1e3:.1f} µs, libc's {installs[2]/1e3:.1f} µs, and their hits")
print(f"the probed file ÷ its copy, both bare (hyperfine, same rounds): {probed/1e3:+.1f} µs")
print(f"ratio (sum of the boundaries), profiled ÷ bare copy: {m['profiled'][3]/m['bare'][3]:.3f}; probed file ÷ copy (both bare): {m['probed'][3]/m['bare'][3]:.3f}")
print(f"per-round ratios (sum of the boundaries): " + ", ".join(f"{p/b:.3f}" for p, b in zip(rows['profiled'][3], rows['bare'][3])))
PY
