"""torch 2.6 traces of scan in its own call form, scan(combine_fn, init, xs,
dim, reverse, additional_inputs), over dim 1 and reversed: calls the
current form (dim 0, not reversed) cannot express, which the joint refuses
(pkg/jointgraph TestJointOlderHOPForm). Run in the torch 2.6 chroot from the
repository root:

    scripts/torch.sh 2.6 -- python3 python/tools/make_scan26_forms.py testdata/hops_real/torch2.6/forms
"""
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch
import hopctl_torch  # noqa: E402


def comb(c, x):
    n = c + x
    return n, n.clone()


def scan_dim1(init, xs):
    return torch.ops.higher_order.scan(comb, [init], [xs], 1, False, [])


def scan_reverse(init, xs):
    return torch.ops.higher_order.scan(comb, [init], [xs], 0, True, [])


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, fn, inputs in [("scan_dim1", scan_dim1, [torch.randn(4), torch.randn(4, 5)]),
                             ("scan_reverse", scan_reverse, [torch.randn(4), torch.randn(5, 4)])]:
        gm = make_fx(fn, tracing_mode="fake")(*inputs)
        hopctl_torch.export(gm, os.path.join(outdir, name + ".pb"), example_inputs=inputs)
        print(name, "traced by torch", torch.__version__)


if __name__ == "__main__":
    main(sys.argv[1])
