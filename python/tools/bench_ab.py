"""Compare two builds' Go benchmarks on a shared machine: alternate runs.

Each side is a pair of test binaries (`go test -c`) of internal/benchmarks
and pkg/jointgraph, built from one tree. The two sides run alternately,
ROUNDS rounds (side A first in odd rounds, side B first in even ones), so
both see the same load; the benchmarks report wall and CPU time per node
(`ns/node`, `cpu-ns/node`: getrusage, all threads). The summary gives, per
benchmark, the median and range of each side and the ratio of the medians,
as a Markdown table (docs/performance-log.md: the one-owner refactor).

    python3 python/tools/bench_ab.py --a before-bench.test,before-joint.test \\
        --b after-bench.test,after-joint.test --rounds 4 --log DIR

A binary runs from its package's directory (--a-dirs/--b-dirs, default: the
current tree's internal/benchmarks and pkg/jointgraph) so that benchmarks
reading testdata find it.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$")
METRIC = re.compile(r"([\d.]+) (\S+)")


def run(binary, cwd, bench, benchtime, log):
    cmd = [binary, "-test.run=^$", "-test.bench=" + bench, "-test.benchtime=" + benchtime]
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("$ %s\n%s%s\n" % (" ".join(cmd), out.stdout, out.stderr))
    if out.returncode != 0:
        sys.exit("%s failed (%d); see %s" % (binary, out.returncode, log))
    res = {}
    for line in out.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        name = m.group(1)[len("Benchmark"):]
        metrics = {unit: float(v) for v, unit in METRIC.findall(m.group(2))}
        res[name] = metrics
    return res


def fmt(xs):
    return "%.0f (%.0f–%.0f)" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="side A: benchmarks,jointgraph test binaries")
    ap.add_argument("--b", required=True, help="side B: the same for the other build")
    ap.add_argument("--a-dirs", default="internal/benchmarks,pkg/jointgraph")
    ap.add_argument("--b-dirs", default="internal/benchmarks,pkg/jointgraph")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--bench", default="/^(10k|100k)$",
                    help="-test.bench pattern (default: the 10k and 100k sub-benchmarks)")
    ap.add_argument("--jbench", default="(JointSynth|PartitionSynth)/^(10k|100k)$",
                    help="-test.bench pattern of the jointgraph binary")
    ap.add_argument("--benchtime", default="1s")
    ap.add_argument("--log", default=".")
    args = ap.parse_args()
    sides = {}
    for side, bins, dirs in (("A", args.a, args.a_dirs), ("B", args.b, args.b_dirs)):
        sides[side] = list(zip([os.path.abspath(b) for b in bins.split(",")], [os.path.abspath(d) for d in dirs.split(",")]))
    os.makedirs(args.log, exist_ok=True)
    results = {"A": {}, "B": {}}
    for r in range(args.rounds):
        order = ("A", "B") if r % 2 == 0 else ("B", "A")
        for side in order:
            log = os.path.join(args.log, "%s.log" % side)
            for k, (binary, cwd) in enumerate(sides[side]):
                bench = args.bench if k == 0 else args.jbench
                for name, metrics in run(binary, cwd, bench, args.benchtime, log).items():
                    for unit, v in metrics.items():
                        results[side].setdefault((name, unit), []).append(v)
            print("round %d side %s done" % (r + 1, side), file=sys.stderr, flush=True)
    for unit, title in (("cpu-ns/node", "CPU ns per node"), ("ns/node", "wall ns per node")):
        print("\n| benchmark, %s | A: median (range) | B: median (range) | B/A |" % title)
        print("|---|---|---|---|")
        names = sorted({n for (n, u) in results["A"] if u == unit} & {n for (n, u) in results["B"] if u == unit},
                       key=lambda n: (n.split("/")[0], int(n.split("/")[1].rstrip("k")) if "/" in n else 0))
        for n in names:
            a, b = results["A"][(n, unit)], results["B"][(n, unit)]
            print("| %s | %s | %s | %.2f |" % (n, fmt(a), fmt(b), statistics.median(b) / statistics.median(a)))


if __name__ == "__main__":
    main()
