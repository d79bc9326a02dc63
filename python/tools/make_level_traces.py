"""Real traces for the graph-level decision (analyze.TorchLevelGraph).

make_fx(tracing_mode="symbolic") writes the SymInt arithmetic of a
program that computes with sizes as operator.* calls (operator.sub on
SymInts) beside ATen ops: such a graph is still make_fx-level. Run in the
torch 2.14 chroot from the repository root:

    scripts/torch.sh 2.14 -- python3 python/tools/make_level_traces.py testdata/level

Writes OUTDIR/cond_sub.pb and OUTDIR/cond_symint.pb.
"""
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch
import hopctl_torch  # noqa: E402


def cond_sub(x):
    # The operand drops x's first row: x.size(0) - 1, a SymInt subtraction.
    y = x.narrow(0, 1, x.size(0) - 1)
    return torch.cond(y.sum() > 0, lambda y: y.sin(), lambda y: y.cos(), (y,))


def cond_symint(x):
    # The branches reshape by a size computed from x's: SymInt arithmetic.
    k = x.size(0) * 2
    return torch.cond(x.sum() > 0, lambda x: x.reshape(k, -1).sin(), lambda x: x.reshape(k, -1).cos(), (x,))


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, fn, inputs in [("cond_sub", cond_sub, [torch.randn(6, 4)]),
                             ("cond_symint", cond_symint, [torch.randn(6, 4)])]:
        gm = make_fx(fn, tracing_mode="symbolic")(*inputs)
        targets = sorted({str(n.target) for n in gm.graph.nodes if n.op == "call_function"})
        print(name, targets)
        hopctl_torch.export(gm, os.path.join(outdir, name + ".pb"), example_inputs=inputs)


if __name__ == "__main__":
    main(sys.argv[1])
