"""A real graph whose two HOP calls share one body (pkg/jointgraph's
TestJointSharedHOPBody).

make_fx gives each map call a body of its own (body_graph_0, body_graph_1)
even when the function is the same; FX graphs may also call one body
twice, as this script makes them: it traces test_control_flow.py's
test_map_functionalized body called twice, points the second call at the
first body, checks in torch that the graph computes what the traced one
does (outputs and the gradients autograd computes through map_impl), and
exports both. Run in the torch 2.14 chroot from the repository root:

    scripts/torch.sh 2.14 -- python3 python/tools/make_shared_body.py testdata/hops_real/shared
"""
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch._higher_order_ops.map import map as hop_map

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch
import hopctl_torch  # noqa: E402


def body(x, w):
    y = x.clone()
    y.mul_(w)
    return y.sin()


def prog(xs, w):
    return hop_map(body, xs, w) * hop_map(body, xs.cos(), w)


def grads(gm, inputs):
    ins = [x.clone().requires_grad_(True) for x in inputs]
    out = gm(*ins)
    out = out[0] if isinstance(out, (tuple, list)) else out
    return out, torch.autograd.grad(out.sum(), ins)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    inputs = [torch.randn(4, 3), torch.randn(3)]
    gm = make_fx(prog, tracing_mode="fake")(*inputs)
    hopctl_torch.export(gm, os.path.join(outdir, "map_two_bodies.pb"), example_inputs=inputs)
    want = grads(gm, inputs)
    attrs = [n for n in gm.graph.nodes if n.op == "get_attr"]
    assert [a.target for a in attrs] == ["body_graph_0", "body_graph_1"], [a.target for a in attrs]
    attrs[1].target = "body_graph_0"
    delattr(gm, "body_graph_1")
    gm.recompile()
    got = grads(gm, inputs)
    assert torch.allclose(want[0], got[0]) and all(torch.allclose(a, b) for a, b in zip(want[1], got[1]))
    hopctl_torch.export(gm, os.path.join(outdir, "map_shared_body.pb"), example_inputs=inputs)
    print("map_shared_body: outputs and gradients equal the traced graph's")


if __name__ == "__main__":
    main(sys.argv[1])
