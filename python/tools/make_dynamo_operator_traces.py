"""Real Dynamo graphs whose tensor arithmetic is Python operators.

Dynamo records `a + b` on tensors as `operator.add` (and `x += 1` as
`operator.iadd`), not as an ATen op: the alias analysis reads them by the
ATen op the Tensor dunder dispatches to (pkg/analyze/passes/alias). Run in
the torch 2.14 chroot from the repository root:

    scripts/torch.sh 2.14 -- python3 python/tools/make_dynamo_operator_traces.py testdata/level

Writes OUTDIR/dynamo_operators*.pb (one file per Dynamo graph) and
OUTDIR/dynamo_operators.json: the inputs an eager run of each program
writes, the oracle of the alias analysis' mutated inputs.
"""
import inspect
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch
import hopctl_torch  # noqa: E402


def functional(pred, x):
    # Fresh results only: + - * / ** @ and a reflected 2 - x.
    y = torch.cond(pred, lambda x: x.sin(), lambda x: x.cos(), (x,)) + 1
    return (y * x - x / 2) ** 2 @ x.t() + (2 - x).sum()


def functional_more(x, n):
    # The rest of the functional dunders: // % unary - + abs, comparisons,
    # bitwise ops on an integer tensor, and the reflected forms.
    a = (x // 3) % 2 + (-x) + (+x) + abs(x) + 3 / (x + 5) + 2 ** x
    b = (n & 3) | (n ^ 1) | (n << 1) | (n >> 1) | ~n | (7 & n)
    c = (x < 1) & (x <= 1) | (x > 0) ^ (x >= 0) | (x == x) & (x != 2)
    return a, b, c


def inplace(x, buf):
    # buf += x writes the input buf: operator.iadd.
    buf += x
    return buf * 2


def inplace_more(x, buf, n):
    # Every augmented assignment on a tensor writes it: -= *= /= on buf,
    # **= //= %= on x, &= |= ^= <<= >>= on n.
    buf -= x
    buf *= 2
    buf /= 3
    x **= 2
    x //= 1
    x %= 5
    n &= 7
    n |= 1
    n ^= 2
    n <<= 1
    n >>= 1
    return buf + x


def setitem(x, buf):
    # buf[0] = x.sum() writes buf: operator.setitem.
    buf[0] = x.sum()
    return x + 1


def scalar_first(x, buf):
    # A scalar on the left runs the tensor's reflected dunder, which
    # writes nothing even for an augmented assignment (s += buf rebinds
    # the name s to a fresh tensor).
    s = 1
    s += buf
    return s - x, 2 * buf


PROGRAMS = [
    ("dynamo_operators", functional, lambda: [torch.tensor(True), torch.randn(4, 4)]),
    ("dynamo_operators_more", functional_more, lambda: [torch.randn(4), torch.arange(4)]),
    ("dynamo_operators_iadd", inplace, lambda: [torch.randn(4), torch.randn(4)]),
    ("dynamo_operators_inplace", inplace_more, lambda: [torch.rand(4) + 1, torch.randn(4), torch.arange(4)]),
    ("dynamo_operators_setitem", setitem, lambda: [torch.randn(4), torch.randn(4)]),
    ("dynamo_operators_scalar_first", scalar_first, lambda: [torch.randn(4), torch.randn(4)]),
]


def changed(inputs, fn):
    """The names of the arguments a run of fn writes, by comparing values
    (Dynamo orders its graph inputs by first use, so names, not indices)."""
    before = [t.clone() for t in inputs]
    fn(*inputs)
    names = list(inspect.signature(fn).parameters)
    return [names[i] for i, (b, t) in enumerate(zip(before, inputs)) if not torch.equal(b, t)]


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    oracle = {}
    for name, fn, make_inputs in PROGRAMS:
        # Eager torch decides which inputs the program writes.
        oracle[name] = changed(make_inputs(), fn)
        d = os.path.join(outdir, "_" + name)
        torch._dynamo.reset()
        torch.compile(fn, backend=hopctl_torch.dump_backend(d), fullgraph=True)(*make_inputs())
        # The backend writes the Dynamo graph and AOTAutograd's; keep Dynamo's.
        os.replace(os.path.join(d, "000_dynamo.pb"), os.path.join(outdir, name + ".pb"))
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        os.rmdir(d)
    with open(os.path.join(outdir, "dynamo_operators.json"), "w") as f:
        json.dump({"torch": torch.__version__, "mutated_inputs": oracle}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
