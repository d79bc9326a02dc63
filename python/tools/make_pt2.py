"""Write testdata/pt2/<torch>/: torch.export archives and what torch says about them.

Run inside a torch 2.x chroot (`make testdata` does, for 2.6 and 2.14):

    scripts/torch.sh 2.14 -- python3 python/tools/make_pt2.py testdata/pt2

For every program below, two archives are saved with torch.export.save:
``<name>.train.pt2`` (the default export, training IR: in-place ops kept, no
mutation specs) and ``<name>.aten.pt2`` (after run_decompositions(): functional
ATen IR, mutations in the signature). torch 2.6 writes the legacy zip layout,
torch >= 2.8 the pt2_archive layout.

``expect.json`` records, per archive, what torch reports — the oracle of
pkg/pt2's tests:

* ``signature``: ep.graph_signature's input and output specs (kind, name,
  target, persistent);
* ``root_inp_inp_alias``: which root placeholders share a storage (the tensors
  behind them: state_dict entries, example inputs), as torch's inp_inp_alias;
* ``mutated``: the root placeholders whose storage a run of ``ep.module()`` on
  the example inputs changes (version counter or values), by name;
* ``hops``: for every HOP subgraph, torch's check_input_alias_and_mutation
  (torch >= 2.8) — inp_inp_alias, inp_out_alias, out_out_alias, mutated_inputs;
* ``nodes``: the number of call_function nodes of every graph of the program
  torch.export.load rebuilds from the archive (when it can load it);
* ``printed``: str() of that program, as torch prints an ExportedProgram.

Every program is deterministic (torch.manual_seed) and tiny (weights of a few
hundred floats), so the archives stay small.
"""

import copy
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

VERSION = ".".join(torch.__version__.split("+")[0].split(".")[:2])


def _ver():
    return tuple(int(x) for x in VERSION.split("."))


# ---------------------------------------------------------------------------
# Programs: name -> () -> (module, args, dynamic_shapes or None, options)


class Wrap(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _corpus(name):
    def build():
        spec = corpus.BUILDERS[name]()
        args = tuple(v.detach().clone() if isinstance(v, torch.Tensor) else v for _, v in spec.inputs)
        model = spec.model if spec.model is not None else Wrap(spec.fn)
        return model, args, None
    return build


class BufferUpdate(nn.Module):
    """Linear + ReLU and a running buffer updated in place (torch.export's usual example of a buffer mutation)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.register_buffer("running", torch.zeros(3))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64), persistent=False)

    def forward(self, x):
        y = torch.relu(self.lin(x))
        self.running.add_(y.detach().mean(0))
        self.steps.add_(1)
        return y


def _buffer_update():
    torch.manual_seed(0)
    return BufferUpdate(), (torch.randn(2, 4),), None


class InputMutation(nn.Module):
    def forward(self, x, y):
        x.mul_(2)
        return x + y


def _input_mutation():
    torch.manual_seed(0)
    return InputMutation(), (torch.randn(3), torch.randn(3)), None


class Cond(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, p, x):
        return torch.cond(p, lambda x: (x * self.w).sin(), lambda x: x.cos(), (x,))


def _cond():
    torch.manual_seed(0)
    return Cond(), (torch.tensor(True), torch.randn(3)), None


class WhileLoop(nn.Module):
    def forward(self, it, x):
        from torch._higher_order_ops.while_loop import while_loop
        return while_loop(lambda it, x: it < 3, lambda it, x: (it + 1, x * 2.0), (it, x))


def _while_loop():
    torch.manual_seed(0)
    return WhileLoop(), (torch.tensor(0), torch.randn(2)), None


class Scan(nn.Module):
    def forward(self, init, xs):
        from torch._higher_order_ops.scan import scan

        def combine(c, x):
            n = c + x
            return n, n.clone()
        return scan(combine, init, xs)


def _scan():
    torch.manual_seed(0)
    return Scan(), (torch.randn(4), torch.randn(5, 4)), None


class Map(nn.Module):
    def forward(self, xs, y):
        from functorch.experimental.control_flow import map as cf_map
        return cf_map(lambda x, y: x.sin() + y, xs, y)


def _map():
    torch.manual_seed(0)
    return Map(), (torch.randn(3, 4), torch.randn(4)), None


def _block(a, b):
    return (a * b).sin()


try:
    from torch._higher_order_ops.invoke_subgraph import mark_compile_region
    _block = mark_compile_region(_block)
except ImportError:
    pass


def _block_mut(a, b):
    a.mul_(2)
    return a + b


try:
    _block_mut = mark_compile_region(_block_mut)
except NameError:
    pass


class InvokeMutation(nn.Module):
    """invoke_subgraph's body mutates its input (Dynamo allows it there)."""

    def forward(self, x, y):
        return _block_mut(x, y) + _block_mut(x, y)


def _invoke_mutation():
    _invoke_subgraph()  # the same config
    torch.manual_seed(0)
    return InvokeMutation(), (torch.randn(3), torch.randn(3)), None


class Invoke(nn.Module):
    def forward(self, x, y):
        return _block(_block(x, y), y)


def _invoke_subgraph():
    # torch >= 2.8 inlines a subgraph it sees used once per trace unless told
    # not to (torch._dynamo.config.inline_single_use_invoke_subgraph).
    cfg = getattr(torch, "_dynamo", None) and torch._dynamo.config
    if cfg is not None and hasattr(cfg, "inline_single_use_invoke_subgraph"):
        cfg.inline_single_use_invoke_subgraph = False
    torch.manual_seed(0)
    return Invoke(), (torch.randn(4, 8), torch.randn(4, 8)), None


@torch.library.custom_op("hopctl_test::inc_", mutates_args={"x"})
def _inc_(x: torch.Tensor, by: float) -> None:
    x.add_(by)


@_inc_.register_fake
def _(x, by):
    return None


class CustomOp(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(3))

    def forward(self, x):
        torch.ops.hopctl_test.inc_(self.acc, 1.5)
        torch.ops.hopctl_test.inc_(x, 2.0)
        return x.sin() + self.acc


def _custom_op():
    torch.manual_seed(0)
    return CustomOp(), (torch.randn(3),), None


class Effects(nn.Module):
    def forward(self, x):
        torch.ops.aten._print("hopctl effect token")
        return x.cos()


def _effects():
    return Effects(), (torch.randn(3),), None


class Dynamic(nn.Module):
    def forward(self, x, y):
        return (x[: x.shape[0] - 1] * 2).sum(0) + y


def _dynamic():
    torch.manual_seed(0)
    b = torch.export.Dim("b", min=3, max=64)
    return Dynamic(), (torch.randn(6, 3), torch.randn(3)), {"x": {0: b}, "y": None}


class Unbacked(nn.Module):
    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 0)
        torch._check(k <= x.shape[0])
        return x[:k].sum() * 1.0 + k


def _unbacked():
    torch.manual_seed(0)
    return Unbacked(), (torch.randn(5), torch.tensor(3)), None


class DoubleLift(nn.Module):
    """Calls a Linear and reads its weight: torch 2.6's training IR lifts lin.weight twice."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x) + self.lin.weight.detach().sum()


def _double_lift():
    torch.manual_seed(0)
    return DoubleLift(), (torch.randn(2, 4),), None


class BatchNormSteps(nn.Module):
    """A BatchNorm1d in training mode and a step counter: four buffer writes
    (running_mean, running_var, num_batches_tracked, steps) that after
    run_decompositions() live only in the signature's buffers_to_mutate (#33)."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.steps.add_(1)
        return self.bn(x)


def _batchnorm_steps():
    torch.manual_seed(0)
    return BatchNormSteps().train(), (torch.randn(4, 3),), None


PROGRAMS = {
    "batchnorm_steps": _batchnorm_steps,
    "mlp": _corpus("mlp"),
    "attention": _corpus("attention"),
    "convbn": _corpus("convbn"),
    "embedding": _corpus("embedding"),
    "inplace_views": _corpus("inplace_views"),
    "buffer_update": _buffer_update,
    "input_mutation": _input_mutation,
    "cond": _cond,
    "while_loop": _while_loop,
    "scan": _scan,
    "map": _map,
    "invoke_subgraph": _invoke_subgraph,
    "custom_op": _custom_op,
    "effects": _effects,
    "dynamic": _dynamic,
    "unbacked": _unbacked,
    "double_lift": _double_lift,
    "invoke_mutation": _invoke_mutation,
}


# ---------------------------------------------------------------------------
# What torch says.


def _spec_json(sig):
    ins = []
    for s in sig.input_specs:
        name = getattr(s.arg, "name", "")
        ins.append({"kind": s.kind.name, "name": name, "target": s.target or "",
                    "persistent": bool(s.persistent) if s.persistent is not None else False})
    outs = []
    for s in sig.output_specs:
        outs.append({"kind": s.kind.name, "name": getattr(s.arg, "name", "") or "", "target": s.target or ""})
    return {"inputs": ins, "outputs": outs}


def _mutated(ep, args):
    """Root placeholders a run of ep.module() writes: by version counter or value."""
    gm = ep.module()
    state = dict(gm.state_dict(keep_vars=True))
    for name, b in gm.named_buffers():
        state.setdefault(name, b)
    run_args = tuple(a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args)
    before_v = {}
    before_x = {}
    for k, t in state.items():
        before_v[("state", k)] = t._version
        before_x[("state", k)] = t.detach().clone()
    for i, a in enumerate(run_args):
        if isinstance(a, torch.Tensor):
            before_v[("arg", i)] = a._version
            before_x[("arg", i)] = a.detach().clone()
    with torch.no_grad():
        gm(*run_args)
    changed = set()
    for k, t in state.items():
        if t._version != before_v[("state", k)] or not torch.equal(t.detach(), before_x[("state", k)]):
            changed.add(("state", k))
    for i, a in enumerate(run_args):
        if isinstance(a, torch.Tensor):
            if a._version != before_v[("arg", i)] or not torch.equal(a.detach(), before_x[("arg", i)]):
                changed.add(("arg", i))
    # Name them by placeholder, through the signature.
    names = []
    user_i = 0
    for s in ep.graph_signature.input_specs:
        kind = s.kind.name
        if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
            if ("state", s.target) in changed:
                names.append(s.arg.name)
        elif kind == "USER_INPUT":
            if ("arg", user_i) in changed:
                names.append(s.arg.name)
            user_i += 1
    return sorted(set(names))


def _root_inp_inp_alias(ep, args):
    """inp_inp_alias of the root graph from the real tensors behind each placeholder
    (state_dict entries, example inputs): i -> the last input sharing its storage,
    torch/_higher_order_ops/utils.py's convention."""
    state = dict(ep.state_dict)
    state.update(getattr(ep, "constants", {}) or {})
    user = iter(args)
    keys = []
    for s in ep.graph_signature.input_specs:
        t = None
        if s.kind.name in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
            t = state.get(s.target)
        elif s.kind.name == "USER_INPUT":
            t = next(user, None)
        keys.append(t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else None)
    last = {}
    for i, k in enumerate(keys):
        if k is not None:
            last[k] = i
    return {str(i): last[k] for i, k in enumerate(keys) if k is not None and last[k] != i}


def _hop_checks(ep):
    try:
        from torch._higher_order_ops.utils import check_input_alias_and_mutation
    except ImportError:
        return None
    out = {}

    def walk(gm, prefix):
        for name, sub in gm.named_children():
            if not isinstance(sub, torch.fx.GraphModule):
                continue
            q = prefix + name
            phs = [n for n in sub.graph.nodes if n.op == "placeholder"]
            fake = []
            ok = True
            for n in phs:
                v = n.meta.get("val")
                if not isinstance(v, torch.Tensor):
                    ok = False
                    break
                fake.append(v)
            if ok:
                try:
                    from torch._subclasses.fake_tensor import FakeTensorMode
                    r = check_input_alias_and_mutation(sub, fake)
                    out[q] = {"inp_inp_alias": {str(k): v for k, v in r[0].items()},
                              "inp_out_alias": {str(k): v for k, v in r[1].items()},
                              "out_out_alias": {str(k): v for k, v in r[2].items()},
                              "mutated_inputs": list(r[3])}
                except Exception as e:  # record, do not fail the corpus
                    out[q] = {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
            walk(sub, q + ".")
    walk(ep.graph_module, "")
    return out


def _loaded(path):
    """(call_function nodes per graph, str(ep)) of the program torch.export.load rebuilds."""
    try:
        ep = torch.export.load(path)
    except Exception as e:
        return {"error": "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:200])}, None
    counts = {}

    def walk(gm, q):
        counts[q] = sum(1 for n in gm.graph.nodes if n.op == "call_function")
        for name, sub in gm.named_children():
            if isinstance(sub, torch.fx.GraphModule):
                walk(sub, (q + "." if q else "") + name)
    walk(ep.graph_module, "")
    return counts, str(ep)


def main():
    out_root = sys.argv[1] if len(sys.argv) > 1 else "testdata/pt2"
    only = set(sys.argv[2:])
    out_dir = os.path.join(out_root, VERSION)
    os.makedirs(out_dir, exist_ok=True)
    expect_path = os.path.join(out_dir, "expect.json")
    expect = {}
    if only and os.path.exists(expect_path):
        with open(expect_path) as f:
            expect = json.load(f)
    for name, build in PROGRAMS.items():
        if only and name not in only:
            continue
        try:
            model, args, dyn = build()
            ep = torch.export.export(model, args, dynamic_shapes=dyn)
        except Exception as e:
            print("%s: export failed on torch %s: %s: %s" % (name, VERSION, type(e).__name__, str(e).splitlines()[0] if str(e) else ""), file=sys.stderr)
            continue
        variants = [("train", ep)]
        try:
            variants.append(("aten", ep.run_decompositions()))
        except Exception as e:
            print("%s: run_decompositions failed: %s" % (name, e), file=sys.stderr)
        for tag, prog in variants:
            path = os.path.join(out_dir, "%s.%s.pt2" % (name, tag))
            try:
                torch.export.save(prog, path)
            except Exception as e:
                print("%s.%s: save failed on torch %s: %s: %s" % (name, tag, VERSION, type(e).__name__, str(e).splitlines()[0] if str(e) else ""), file=sys.stderr)
                continue
            _, fresh_args, _ = build()
            nodes, printed = _loaded(path)
            rec = {"signature": _spec_json(prog.graph_signature),
                   "verifiers": [v.dialect for v in getattr(prog, "verifiers", [])] if hasattr(prog, "verifiers") else [],
                   "mutated": _mutated(prog, fresh_args),
                   "root_inp_inp_alias": _root_inp_inp_alias(prog, build()[1]),
                   "nodes": nodes,
                   "printed": printed}
            hops = _hop_checks(prog)
            if hops is not None:
                rec["hops"] = hops
            expect["%s.%s" % (name, tag)] = rec
            print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))
    with open(expect_path, "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
