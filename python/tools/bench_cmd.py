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

Standard library only, so it runs under any python3.
"""

import argparse
import os
import statistics
import sys
import time


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
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        ap.error("no command")
    ok = {int(c) for c in args.ok_codes.split(",")}
    _, _, code, _ = run_once(cmd)  # warm-up: page cache, binary
    if code not in ok:
        sys.exit("bench_cmd: %s exited %d" % (" ".join(cmd), code))
    walls, rss, base, cpus = [], 0, [], []
    for _ in range(args.runs):
        if args.net:
            base.append(run_once(["/bin/true"])[0])
        w, r, code, cpu = run_once(cmd)
        cpus.append(cpu)
        if code not in ok:
            sys.exit("bench_cmd: %s exited %d" % (" ".join(cmd), code))
        walls.append(w)
        rss = max(rss, r)
    spawn = statistics.median(base) if base else 0.0
    net = sorted(w - spawn for w in walls)
    med = statistics.median(net)
    label = args.label or " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))
    if med < 1:
        times = "%8.2f ms  [%.2f–%.2f]" % (med * 1e3, net[0] * 1e3, net[-1] * 1e3)
    else:
        times = "%8.2f s   [%.2f–%.2f]" % (med, net[0], net[-1])
    extra = "  (net of /bin/true, median %.2f ms)" % (spawn * 1e3) if args.net else ""
    cpu = statistics.median(cpus)
    cpu_s = "%.2f ms" % (cpu * 1e3) if cpu < 1 else "%.2f s" % cpu
    print("  %-58s %s  cpu %s  %7.0f MiB  n=%d%s" % (label, times, cpu_s, rss / 1024, args.runs, extra))


if __name__ == "__main__":
    main()
