#!/usr/bin/env python3
"""Programs one torch release accepts and the next refuses, and their verdicts.

Run in each torch chroot; the 2.6 run writes the graphs, every run records
its release's verdicts in OUTDIR/verdicts.json (the other releases' are
kept):

    scripts/torch.sh 2.6 -- python3 python/tools/make_releases.py testdata/releases
    scripts/torch.sh 2.14 -- python3 python/tools/make_releases.py testdata/releases

The trigger is the shape that broke Hugging Face transformers on torch 2.8
(pytorch/pytorch#158375 -> huggingface/transformers#39488): a torch.cond
branch that returns a view of its operand. torch 2.6's torch.export traces
it (Dynamo speculates the branches without checking them for aliasing,
torch/_dynamo/variables/higher_order_ops.py speculate_subgraph); 2.14's
Dynamo refuses it (check_aliasing_and_input_mutation: "Encountered aliasing
during higher order op tracing"). The near miss is the same program with
the .clone() that PyTorch's message asks for: both releases accept it.

For every program, OUTDIR/<name>.pt2 is torch.export.save of the 2.6
export (2.14 exports no graph of the trigger), and verdicts.json records,
per release, what torch.export.export(model, args) says: "ok", or the
exception's type and first message line. pkg/lint's
TestReleasesAgainstTorch requires `hopctl lint --torch-version 2.6,2.14` to
report each program as refused by exactly the releases that refused it.
"""

import json
import os
import sys

import torch

VERSION = ".".join(torch.__version__.split("+")[0].split(".")[:2])
GRAPHS_FROM = "2.6"


class CondView(torch.nn.Module):
    """The trigger: the true branch returns a view of the operand."""

    def forward(self, x):
        def true_fn(x):
            return x.view(-1)

        def false_fn(x):
            return (x + 1).view(-1)

        return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


class CondViewClone(torch.nn.Module):
    """The near miss: the view is cloned, as PyTorch's message asks."""

    def forward(self, x):
        def true_fn(x):
            return x.view(-1).clone()

        def false_fn(x):
            return (x + 1).view(-1)

        return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


PROGRAMS = {
    "cond_view": CondView,
    "cond_view_clone": CondViewClone,
}


def _message(e):
    """The line naming the rule that refused the program: Dynamo wraps its
    graph break ("Encountered aliasing during higher order op tracing")
    in UncapturedHigherOrderOpError's first line; else the first line."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    for ln in lines:
        if "aliasing" in ln or "mutation" in ln or "modifying" in ln:
            return ln
    return lines[0] if lines else ""


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "testdata/releases"
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "verdicts.json")
    doc = {"graphs_from": GRAPHS_FROM, "call": "torch.export.export(model, (torch.randn(2, 3),))", "programs": {}}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    for name, cls in PROGRAMS.items():
        torch.manual_seed(0)
        args = (torch.randn(2, 3),)
        rec = doc["programs"].setdefault(name, {})
        try:
            ep = torch.export.export(cls(), args)
        except Exception as e:  # the release's refusal is the verdict
            rec[VERSION] = {"type": type(e).__name__, "message": _message(e)}
            continue
        rec[VERSION] = "ok"
        if VERSION == GRAPHS_FROM:
            torch.export.save(ep, os.path.join(out, name + ".pt2"))
    doc["programs"] = {k: dict(sorted(v.items(), key=lambda kv: tuple(int(p) for p in kv[0].split(".")))) for k, v in sorted(doc["programs"].items())}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
