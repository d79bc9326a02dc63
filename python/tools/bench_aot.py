"""Side-by-side: hopctl joint + min-cut partition vs AOTAutograd, on the same
graph, in one run.

The model is a stack of LAYERS Linear -> LayerNorm -> GELU blocks (1000 by
default: about 11k aten nodes). Its parameters are lifted to inputs, as
AOTAutograd does, and the function is traced once with make_fx and exported
through the bridge. Then:

* AOTAutograd: functorch.compile.aot_function with
  min_cut_rematerialization_partition and no-op compilers; the time of the
  first forward + backward call (which traces the joint graph, partitions it
  and "compiles" both halves), minus an eager forward + backward of the same
  function;
* hopctl: `hopctl joint IN -o OUT --partition mincut --fw-out FW --bw-out BW
  --timings` as a subprocess, run --runs times (medians reported): the whole
  command spawned as a shell spawns it (posix_spawn, bench_cmd.py), its wall
  time as this interpreter's subprocess.run sees it (spawning from a torch-loaded process
  adds some 20 ms), the command's own total from its --timings line (decode,
  validation, joint, partition, verification, encoding and three atomic
  writes), and the joint + partition phases alone, the work
  AOTAutograd's number covers.

    PYTHONPATH=python /usr/bin/python3 python/tools/bench_aot.py --hopctl bin/hopctl
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hopctl_torch  # noqa: E402

try:
    from torch.func import functional_call
except Exception:  # torch 1.13
    from torch.nn.utils.stateless import functional_call


def build(layers, width):
    torch.manual_seed(0)
    blocks = []
    for _ in range(layers):
        blocks += [nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()]
    model = nn.Sequential(*blocks)
    names = [n for n, _ in model.named_parameters()]
    params = [p.detach().clone().requires_grad_(True) for p in model.parameters()]
    x = torch.randn(8, width, requires_grad=True)

    def fn(*args):
        return (functional_call(model, dict(zip(names, args[:-1])), (args[-1],)),)

    return fn, params + [x]


def count_nodes(gm):
    return sum(1 for _ in gm.graph.nodes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hopctl", default="bin/hopctl")
    ap.add_argument("--runs", type=int, default=5, help="hopctl runs (medians are reported)")
    ap.add_argument("--layers", type=int, default=1000)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    from functorch.compile import aot_function, min_cut_rematerialization_partition

    fn, inputs = build(args.layers, args.width)
    work = args.workdir or tempfile.mkdtemp()
    graph = os.path.join(work, "stack-%d.pb" % args.layers)
    gm = make_fx(fn)(*inputs)
    hopctl_torch.export(gm, graph, example_inputs=inputs)
    print("graph: %d layers, %d nodes, %s" % (args.layers, count_nodes(gm), graph))

    # Eager reference, to subtract plain execution from AOTAutograd's time.
    t0 = time.perf_counter()
    out = fn(*inputs)[0]
    torch.autograd.grad(out.sum(), inputs)
    eager = time.perf_counter() - t0

    saved = {}

    def fw_compiler(fx_g, _):
        saved["fw_outputs"] = len(list(fx_g.graph.nodes)[-1].args[0])
        return fx_g

    def bw_compiler(fx_g, _):
        saved["bw_inputs"] = sum(1 for n in fx_g.graph.nodes if n.op == "placeholder")
        return fx_g

    compiled = aot_function(fn, fw_compiler=fw_compiler, bw_compiler=bw_compiler,
                            partition_fn=min_cut_rematerialization_partition)
    t0 = time.perf_counter()
    out = compiled(*inputs)[0]
    torch.autograd.grad(out.sum(), inputs)
    aot = time.perf_counter() - t0 - eager

    cmd = [args.hopctl, "joint", graph, "-o", os.path.join(work, "joint.pb"), "--partition", "mincut",
           "--fw-out", os.path.join(work, "fw.pb"), "--bw-out", os.path.join(work, "bw.pb"), "--timings"]
    # hopctl is cheap: run it RUNS times and report medians.
    walls, totals, works, last = [], [], [], ""
    for _ in range(args.runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            sys.exit("hopctl joint failed (%d): %s" % (proc.returncode, proc.stderr))
        # The process's own phase times (--timings): "joint" (Build, and
        # verifying the joint) and "partition" (Split) are the work
        # AOTAutograd's number covers; the other phases read, validate,
        # verify, encode and write.
        last = proc.stderr.strip().splitlines()[-1]
        phases = dict(re.findall(r"([a-z+]+) ([0-9.]+) ms", last.split("timings:", 1)[1]))
        totals.append(float(phases["total"]) / 1000)
        works.append((float(phases["joint"]) + float(phases["partition"])) / 1000)
    wall, total, work_s = (sorted(v)[len(v) // 2] for v in (walls, totals, works))
    # The whole command as a shell runs it: spawned with posix_spawn (vfork,
    # so the size of this torch-loaded process does not matter), without
    # --timings, wall time from spawn to exit (bench_cmd.py's way).
    from bench_cmd import run_once
    whole = sorted(run_once(cmd[:-1])[0] for _ in range(args.runs))
    whole_med = whole[len(whole) // 2]
    print("AOTAutograd (aot_function + min_cut_rematerialization_partition): %.3f s" % aot)
    print("hopctl joint --partition mincut, median of %d runs:" % args.runs)
    print("  the whole command, spawned as a shell spawns it:                %.3f s [%.3f–%.3f]" % (whole_med, whole[0], whole[-1]))
    print("  subprocess wall time seen from this (torch-loaded) interpreter:  %.3f s" % wall)
    print("  the command's own total (--timings):                            %.3f s" % total)
    print("  of which joint + partition (--timings):                         %.3f s" % work_s)
    print("  last run: %s" % last)
    print("ratio: %.0fx (whole command), %.0fx (subprocess), %.0fx (command's own total), %.0fx (joint + partition)" % (
        aot / whole_med, aot / wall, aot / total, aot / work_s))
    if "fw_outputs" in saved:
        print("AOTAutograd forward outputs (outputs + saved): %d" % saved["fw_outputs"])


if __name__ == "__main__":
    main()
