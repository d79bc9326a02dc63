"""Whole-command timings for `make bench` (scripts/bench.sh).

    python3 python/tools/bench_cmd.py --runs N [--net] [--label L] -- CMD ARGS...

Runs CMD N times (after one warm-up run), each spawned directly
(posix_spawn, no shell) with stdout and stderr to /dev/null, and prints one
row: the median wall time with its range, the median processor time
(user + system: less sensitive than wall time to other load on the
machine, though not immune to it), and the largest peak RSS, read
from wait4's rusage as /usr/bin/time reads it, but to the microsecond
(/usr/bin/time prints 10 ms steps). With --net, /bin/true is run the same
way, interleaved with CMD, and its median is subtracted: the cost of
spawning a process, which is not the command's.

With --vs OTHER (a second binary; repeatable), the same arguments are run
with OTHER in place of CMD's program, alternately with CMD (which one goes
first changes every run), and a row is printed for each: a before/after
comparison under the same load on a shared machine. "{k}" in an argument
is replaced by the program's index (0 for CMD, 1, 2, ... for each OTHER):
a command that writes files then writes its own, so each run replaces
what the same program wrote before, as a user's run would, and not what
the other program wrote a moment ago (on ext4, removing a file written a
moment before can wait for its writeback: alternated on shared outputs,
each binary paid for the other's; README, Performance). The programs are
run from copies (unless --no-copy) made for the run, each written in one
write as `make build` writes bin/hopctl: how a file was written decides
how the page cache holds it and so how the binary is mapped at every start
(the Makefile's build target says how; docs/performance-log.md,
"Thirteenth pass", what it costs), which would bias a comparison towards
the binary written the better way.

With --over 'FLOOR ARGS' (one string, split as a shell splits words), CMD
and FLOOR run in turn, which goes first alternating, and one row of the
ratio CMD / FLOOR is printed: the median of the pairwise ratios of wall
time with their range, the same for peak RSS with --rss, and each side's
median wall time and peak RSS. Pairing keeps the ratio meaningful while
the machine's speed drifts under other load. --per F divides the ratios
by F (a per-node ratio of two graph sizes F apart). These are the rows of
`make bench` (scripts/bench.sh ratios).

Standard library only, so it runs under any python3.
"""

import argparse
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time


def copy_at_once(src, dst):
    """Copies src to dst in one write, with src's mode (see the module's doc)."""
    with open(src, "rb") as f:
        data = f.read()
    with open(dst, "wb") as f:
        f.write(data)
    shutil.copymode(src, dst)


def run_once(argv):
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawnp(
            argv[0],
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
            ],
        )
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
    finally:
        os.close(devnull)
    code = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_maxrss, code, ru.ru_utime + ru.ru_stime  # ru_maxrss: KiB on Linux


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--net", action="store_true", help="subtract /bin/true's median")
    ap.add_argument("--label", default=None)
    ap.add_argument("--ok-codes", default="0", help="exit codes that count as success (comma-separated)")
    ap.add_argument("--vs", action="append", default=[], help="another binary run alternately with the same arguments (repeatable)")
    ap.add_argument("--no-copy", action="store_true", help="with --vs, run the binaries as they are, not copies")
    ap.add_argument("--over", default=None, help="the floor: a command run in turn with CMD; prints CMD / FLOOR")
    ap.add_argument("--rss", action="store_true", help="with --over, also the ratio of peak RSS")
    ap.add_argument("--per", type=float, default=1.0, help="with --over, divide the ratios by this")
    ap.add_argument("--goal", default="", help="with --over, the goal printed beside the ratio")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        ap.error("no command")
    ok = {int(c) for c in args.ok_codes.split(",")}
    if args.over:
        ratio(args, cmd, shlex.split(args.over), ok)
        return
    cmds = [own(cmd, 0)] + [own([vs] + cmd[1:], k + 1) for k, vs in enumerate(args.vs)]
    names = [c[0] for c in cmds]
    if args.vs and not args.no_copy:
        with tempfile.TemporaryDirectory(prefix="bench-cmd-") as tmp:
            for k, c in enumerate(cmds):
                copy = os.path.join(tmp, "%d-%s" % (k, os.path.basename(c[0])))
                copy_at_once(shutil.which(c[0]) or c[0], copy)
                cmds[k] = [copy] + c[1:]
            measure(args, cmds, names, ok)
        return
    measure(args, cmds, names, ok)


def own(cmd, k):
    """cmd with "{k}" in its arguments replaced by k, the program's index."""
    return [cmd[0]] + [a.replace("{k}", str(k)) for a in cmd[1:]]


def measure(args, cmds, names, ok):
    for c in cmds:
        _, _, code, _ = run_once(c)  # warm-up: page cache, binary
        if code not in ok:
            sys.exit("bench_cmd: %s exited %d" % (" ".join(c), code))
    walls = [[] for _ in cmds]
    cpus = [[] for _ in cmds]
    rss = [0 for _ in cmds]
    base = []
    for i in range(args.runs):
        if args.net:
            base.append(run_once(["/bin/true"])[0])
        order = list(range(len(cmds)))
        order = order[i % len(order):] + order[: i % len(order)]  # each first in turn
        for k in order:
            w, r, code, cpu = run_once(cmds[k])
            if code not in ok:
                sys.exit("bench_cmd: %s exited %d" % (" ".join(cmds[k]), code))
            walls[k].append(w)
            cpus[k].append(cpu)
            rss[k] = max(rss[k], r)
    spawn = statistics.median(base) if base else 0.0
    for k, c in enumerate(cmds):
        c = [names[k]] + c[1:]
        label = args.label or " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(c))
        if args.vs:
            label = "%s: %s" % (os.path.basename(c[0]), label)
        report(label, walls[k], cpus[k], rss[k], spawn, args)


def ratio(args, a, b, ok):
    """One ratio row: a and b in turn, args.runs pairs, pairwise ratios."""
    for c in (a, b):
        if run_once(c)[2] not in ok:  # warm-up: page cache, binary
            sys.exit("bench_cmd: %s failed" % " ".join(c))
    runs = {0: [], 1: []}
    for i in range(args.runs):
        pair = [None, None]
        for k in ((0, 1) if i % 2 == 0 else (1, 0)):
            w, r, code, _ = run_once((a, b)[k])
            if code not in ok:
                sys.exit("bench_cmd: %s exited %d" % (" ".join((a, b)[k]), code))
            pair[k] = (w, r)
        runs[0].append(pair[0])
        runs[1].append(pair[1])
    walls = sorted(x[0] / y[0] / args.per for x, y in zip(runs[0], runs[1]))
    rsss = sorted(x[1] / y[1] / args.per for x, y in zip(runs[0], runs[1]))

    def side(rs):
        w = statistics.median(x[0] for x in rs)
        t = "%.2f ms" % (w * 1e3) if w < 1 else "%.2f s" % w
        return "%s %.0f MiB" % (t, max(x[1] for x in rs) / 1024)

    cell = "%6.2fx [%.2f–%.2f]" % (statistics.median(walls), walls[0], walls[-1])
    if args.rss:
        cell += "  rss %5.2fx [%.2f–%.2f]" % (statistics.median(rsss), rsss[0], rsss[-1])
    print("  %-52s %s  goal %-7s (%s / %s, n=%d)" % (
        args.label or " ".join(a), cell, args.goal or "-", side(runs[0]), side(runs[1]), args.runs))
    sys.stdout.flush()


def report(label, walls, cpus, rss, spawn, args):
    net = sorted(w - spawn for w in walls)
    med = statistics.median(net)
    if med < 1:
        times = "%8.2f ms  [%.2f–%.2f]" % (med * 1e3, net[0] * 1e3, net[-1] * 1e3)
    else:
        times = "%8.2f s   [%.2f–%.2f]" % (med, net[0], net[-1])
    extra = "  (net of /bin/true, median %.2f ms)" % (spawn * 1e3) if args.net else ""
    cpus = sorted(cpus)
    cpu = statistics.median(cpus)
    if cpu < 1:
        cpu_s = "%.2f ms [%.2f–%.2f]" % (cpu * 1e3, cpus[0] * 1e3, cpus[-1] * 1e3)
    else:
        cpu_s = "%.2f s [%.2f–%.2f]" % (cpu, cpus[0], cpus[-1])
    print("  %-58s %s  cpu %s  %7.0f MiB  n=%d%s" % (label, times, cpu_s, rss / 1024, args.runs, extra))

if __name__ == "__main__":
    main()
