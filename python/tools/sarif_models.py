"""Real torch 2.x exports for hopctl's SARIF tests (internal/cli/sarif_torch_test.go).

    scripts/torch.sh 2.14 -- python3 python/tools/sarif_models.py OUTDIR

writes, with make_fx and the bridge:

* OUTDIR/a/model.pbtxt: Model, whose cond's true branch writes its input
  (``x.add_(1)``, the line marked MUTATION below);
* OUTDIR/b/model.pbtxt: the same Model traced after another, clean cond on
  the same inputs (Renumbered), so every node and subgraph of Model is
  numbered differently (cond → cond_1, true_graph_0 → true_graph_1), as a
  re-export after an edit elsewhere numbers them;
* OUTDIR/c/model.pbtxt: OtherModel, whose branch writes with mul_ instead:
  a different finding, whose fingerprint must differ.

The cond is called as torch.ops.higher_order.cond: torch.cond compiles it
with Dynamo first, which refuses a mutating branch before any graph exists
(the finding hopctl reports statically). The branches are modules, because
make_fx keeps only frames of ``forward`` methods in stack traces
(PythonKeyTracer with _record_forward_stack_traces_only). torch 2.14's
make_fx records stack traces only in the root tracer: the sub-tracers
reenter_make_fx creates for HOP bodies are built without
record_stack_traces (proxy_tensor._MakefxTracer._init_modes_from_parent), so
this script turns recording on for every PythonKeyTracer, the same
mechanism the root tracer uses.
"""

import os
import sys

import torch
import torch.fx.experimental.proxy_tensor as proxy_tensor
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import hopctl_torch  # noqa: E402


class Mutates(torch.nn.Module):
    def forward(self, x):
        x.add_(1)  # MUTATION
        return (x.sin(),)


class MutatesMul(torch.nn.Module):
    def forward(self, x):
        x.mul_(2)  # MUTATION-MUL
        return (x.sin(),)


class Clean(torch.nn.Module):
    def forward(self, x):
        return (x.cos(),)


class Model(torch.nn.Module):
    def __init__(self, branch=Mutates):
        super().__init__()
        self.t, self.f = branch(), Clean()

    def forward(self, pred, x):
        return torch.ops.higher_order.cond(pred, self.t, self.f, (x,))


class Renumbered(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Clean()
        self.model = Model()

    def forward(self, pred, x):
        (y,) = torch.ops.higher_order.cond(pred, self.first, self.first, (x,))
        return self.model(pred, x)[0] + y


def export(module, path):
    inputs = (torch.tensor(False), torch.randn(3))
    proxy_tensor.PythonKeyTracer.record_stack_traces = True
    proxy_tensor.PythonKeyTracer._record_forward_stack_traces_only = True
    gm = make_fx(module, record_stack_traces=True)(*inputs)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    hopctl_torch.export(gm, path, example_inputs=inputs)


def main(out):
    torch.manual_seed(0)
    export(Model(), os.path.join(out, "a", "model.pbtxt"))
    export(Renumbered(), os.path.join(out, "b", "model.pbtxt"))
    export(Model(MutatesMul), os.path.join(out, "c", "model.pbtxt"))


if __name__ == "__main__":
    main(sys.argv[1])
