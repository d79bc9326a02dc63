"""Oracles for `hopctl joint`: what torch computes for a corpus model.

reference(name, masks) runs the original graph (hopctl_torch.load of
testdata/models/<name>.pb) on corpus.make_inputs(name) and returns the flat
forward outputs and torch.autograd.grad's gradients for random tangents.
aot_saved(name, partition, budget) counts the values functorch's
aot_function saves with that partition function on the same model, and
their bytes (numel x itemsize of the tensors its forward returns for the
backward), under torch._functorch.config.activation_memory_budget = budget
when given (torch 2.x).

    PYTHONPATH=python /usr/bin/python3 python/tools/joint_oracle.py mlp
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
REPO = os.path.dirname(PYROOT)
for p in (HERE, PYROOT):
    if p not in sys.path:
        sys.path.insert(0, p)

import corpus  # noqa: E402
import hopctl_torch  # noqa: E402

def model_path(name):
    """The corpus file of this torch (corpus.model_path)."""
    return corpus.model_path(name)


def flatten(o):
    if isinstance(o, (list, tuple)):
        out = []
        for x in o:
            out += flatten(x)
        return out
    return [o]


def fresh_inputs(name, detach=False):
    """corpus.make_inputs(name), with storage sharing rebuilt for shared_storage."""
    ins = corpus.make_inputs(name)
    if detach:
        ins = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in ins]
        if name == "shared_storage":  # window is a view of base
            ins[1] = ins[0][1:3]
    return ins


class Reference:
    """The original graph's outputs and gradients for one set of masks."""

    def __init__(self, name, masks=None, seed=1):
        gm = hopctl_torch.load(model_path(name))
        inputs = fresh_inputs(name)
        outs = flatten(gm(*inputs))
        if masks is None:  # prepare_fw_with_masks
            masks = [isinstance(o, torch.Tensor) and o.requires_grad for o in outs]
        gen = torch.Generator().manual_seed(seed)
        self.tangents = [torch.randn(o.shape, generator=gen, dtype=o.dtype)
                         for o, m in zip(outs, masks) if m]
        used = [(o, t) for (o, m), t in zip([(o, m) for o, m in zip(outs, masks) if m], self.tangents)
                if o.requires_grad]
        self.grads = [None] * len(inputs)
        req = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.requires_grad]
        if req and used:
            gs = torch.autograd.grad([o for o, _ in used], [inputs[i] for i in req],
                                     [t for _, t in used], allow_unused=True)
            for i, g in zip(req, gs):
                self.grads[i] = g
        self.outputs = [o.detach() if isinstance(o, torch.Tensor) else o for o in outs]
        self.masks = masks
        self.inputs_after = [x.detach() if isinstance(x, torch.Tensor) else x for x in inputs]
        self.requires_grad = [isinstance(x, torch.Tensor) and x.requires_grad for x in inputs]


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).abs().max() / want.abs().max().clamp_min(1e-12)).item()


def nbytes(x):
    """numel x itemsize of a tensor; 0 for a SymInt or int."""
    return x.numel() * x.element_size() if isinstance(x, torch.Tensor) else 0


def aot_saved(name, partition, budget=None):
    """(count, bytes) of the values aot_function's forward saves for the backward."""
    from functorch.compile import aot_function
    gm = hopctl_torch.load(model_path(name))
    inputs = fresh_inputs(name)
    seen = {}

    def fw_compiler(g, _):
        def run(*args):
            seen["fw_out"] = g(*args)
            return seen["fw_out"]
        return run

    def bw_compiler(g, _):
        seen["bw"] = g
        return g

    patch = None
    if budget is not None:
        import torch._functorch.config as cfg
        patch = cfg.patch(activation_memory_budget=budget)
        patch.__enter__()
    try:
        f = aot_function(gm, fw_compiler, bw_compiler, partition_fn=partition)
        outs = [o for o in flatten(f(*inputs)) if isinstance(o, torch.Tensor) and o.requires_grad]
    finally:
        if patch is not None:
            patch.__exit__(None, None, None)
    if not outs:
        return 0, 0
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
    ph = [n for n in seen["bw"].graph.nodes if n.op == "placeholder" and "tangents" not in n.name]
    # The forward returns the outputs, then the saved values (tensors, then
    # SymInts): the last len(ph) are what the backward takes.
    fw_out = list(seen["fw_out"])
    saved = fw_out[len(fw_out) - len(ph):] if ph else []
    return len(ph), sum(nbytes(x) for x in saved)


def aot_saved_count(name, partition):
    """Number of values functorch.compile.aot_function saves for the backward."""
    return aot_saved(name, partition)[0]


if __name__ == "__main__":
    from functorch.compile import default_partition, min_cut_rematerialization_partition
    for n in sys.argv[1:] or corpus.NAMES:
        print(n, "default", aot_saved_count(n, default_partition),
              "mincut", aot_saved_count(n, min_cut_rematerialization_partition))
