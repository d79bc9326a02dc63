"""Real traces of ops whose runtime meaning their schema does not spell out,
with torch's own four results as the oracle.

`x.set_(y)` writes x (a storage mutation) and leaves x sharing y's storage:
torch's check_input_alias_and_mutation (torch/_higher_order_ops/utils.py)
maps its result to input y and finds no alias between x and y. Run in the
torch 2.14 chroot from the repository root:

    scripts/torch.sh 2.14 -- python3 python/tools/make_op_semantics.py testdata/semantics

Writes OUTDIR/NAME.pb and OUTDIR/verdicts.json (the four results of each
root graph, in the format of testdata/hops_real/verdicts.json).
"""
import json
import os
import sys

import torch
from torch._higher_order_ops.utils import check_input_alias_and_mutation_return_outputs
from torch.fx.experimental.proxy_tensor import make_fx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch
import hopctl_torch  # noqa: E402


def set_return(x, y):
    # Trigger: the result is x on y's storage.
    x.set_(y)
    return x


def set_then_write(x, y):
    # Trigger: a write through x after set_ writes y's storage.
    x.set_(y)
    x.add_(1)
    return x.sin(), y


def add_return(x, y):
    # Near miss: an in-place op returns its self.
    x.add_(1)
    return x.view(-1), y


PROGRAMS = [("set_return", set_return), ("set_then_write", set_then_write), ("add_return", add_return)]


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    verdicts = {"torch_version": torch.__version__, "programs": {}}
    for name, fn in PROGRAMS:
        gm = make_fx(fn, tracing_mode="fake")(torch.randn(3), torch.randn(3))
        inp_inp, inp_out, out_out, mutated = check_input_alias_and_mutation_return_outputs(gm)[:4]
        verdicts["programs"][name] = {"subgraphs": {"": {
            "mutated_inputs": mutated, "inp_inp_alias": inp_inp,
            "inp_out_alias": inp_out, "out_out_alias": out_out}}}
        hopctl_torch.export(gm, os.path.join(outdir, name + ".pb"))
    with open(os.path.join(outdir, "verdicts.json"), "w") as f:
        json.dump(verdicts, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
