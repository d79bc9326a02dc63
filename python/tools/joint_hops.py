"""Reference implementations of cond, map_impl, scan, associative_scan and
invoke_subgraph for torch 1.13.

torch 1.13 has no torch.ops.higher_order, so graphs with HOPs (the
hand-written testdata/hops/*.pbtxt, and the joint graphs hopctl builds from
them) cannot run there. install() registers plain-Python versions with the
calling conventions of
torch/_higher_order_ops/{cond,map,scan,associative_scan,invoke_subgraph}.py (hopctl's HOP
table, pkg/opschema/hops.go) under
torch.ops.higher_order, so hopctl_torch.load can run such graphs and
autograd can differentiate them. It does nothing when torch has the HOPs.
"""

import types

import torch


def _flat(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def cond(pred, true_fn, false_fn, operands):
    fn = true_fn if bool(pred) else false_fn
    return tuple(_flat(fn(*operands)))


def map_impl(f, xs, pos_args):
    n = xs[0].shape[0]
    steps = [_flat(f(*[x[i] for x in xs], *pos_args)) for i in range(n)]
    return tuple(torch.stack([s[k] for s in steps]) for k in range(len(steps[0])))


def scan(combine_fn, init, xs, additional_inputs):
    carry = list(init)
    ys = []
    n = xs[0].shape[0] if xs else 0
    for t in range(n):
        out = _flat(combine_fn(*carry, *[x[t] for x in xs], *additional_inputs))
        carry, y = out[:len(init)], out[len(init):]
        ys.append(y)
    stacked = [torch.stack([y[k] for y in ys]) for k in range(len(ys[0]))] if ys else []
    return tuple(carry + stacked)


def associative_scan(combine_fn, xs, additional_inputs):
    """Inclusive scan along dim 0, sequentially: ys[t] = combine_fn(ys[t-1], xs[t])."""
    n = xs[0].shape[0]
    ys = [[x[0] for x in xs]]
    for t in range(1, n):
        ys.append(_flat(combine_fn(*ys[-1], *[x[t] for x in xs], *additional_inputs)))
    return tuple(torch.stack([y[k] for y in ys]) for k in range(len(xs)))


def invoke_subgraph(subgraph, identifier, *operands):
    return tuple(_flat(subgraph(*operands)))


def install():
    """Make torch.ops.higher_order.{cond,map_impl,scan,associative_scan,invoke_subgraph}
    resolve on torch 1.13."""
    try:
        ns = torch.ops.higher_order
        if callable(getattr(ns, "cond", None)):
            return False
    except Exception:
        pass
    torch.ops.higher_order = types.SimpleNamespace(cond=cond, map_impl=map_impl, scan=scan,
                                                   associative_scan=associative_scan, invoke_subgraph=invoke_subgraph)
    return True
