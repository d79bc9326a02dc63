"""Graphs whose derivative rules must refuse a node (pkg/jointgraph TestRuleFailures).

Each case is traced by make_fx with tracing_mode="symbolic" (sizes become
SymInts, as in torch.compile's dynamic-shape graphs) and written with the
bridge. hopctl's rules for these ops need concrete sizes (or, for a sparse
embedding, a dense gradient), so `hopctl joint` must fail with an input error naming the node (exit 3), never an internal
error. Run with torch 2.x:

    scripts/torch.sh 2.14 -- python3 python/tools/make_rulefail.py pkg/jointgraph/testdata/rulefail
"""

import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import hopctl_torch  # noqa: E402

CASES = [
    # Formulas that fail themselves (return c.fail(...)).
    ("cat_symbolic", lambda x: torch.cat([x, x * 2])),
    ("embedding_sparse", lambda x: torch.nn.functional.embedding(torch.tensor([0, 2]), x, sparse=True)),
    # An argument accessor that fails (Ctx.Int on a SymInt).
    ("slice_symbolic", lambda x: x[: x.shape[0] - 1] * 2),
]


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, fn in CASES:
        x = torch.randn(4, 3, requires_grad=True)
        gm = make_fx(fn, tracing_mode="symbolic")(x)
        hopctl_torch.export(gm, os.path.join(out, name + ".pbtxt"), example_inputs=[x])
        print(name, torch.__version__)
        print(gm.code)


if __name__ == "__main__":
    main(sys.argv[1])
