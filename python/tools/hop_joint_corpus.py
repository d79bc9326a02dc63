#!/usr/bin/env python3
"""The real-trace HOP joint corpus: HOP backwards as torch 2.14 builds them.

Each program mirrors a test of PyTorch's test/functorch/test_control_flow.py
or test/higher_order_ops/test_invoke_subgraph.py (named in PROGRAMS) and is
a trigger of a backward rule or its near miss. For every program this writes

* OUTDIR/<name>.pb: the forward graph, make_fx(f, tracing_mode=...) on
  inputs that require grad (for invoke_subgraph: make_fx of the graph Dynamo
  captures, with inline_single_use_invoke_subgraph as the program says);
* an entry of OUTDIR/joint.json with torch's verdict:
  - "error": the message torch raises computing the gradient through the
    HOP (None when it differentiates it);
  - "torch_joint": the structure of torch's own backward, read from
    make_fx of torch.autograd.grad through the program: the invoke_subgraph
    identifiers and, per backward subgraph, the None slots of its output;
    the number of outputs of cond's backward branches; the ops of
    associative_scan's backward; each while_loop call (the forward's
    while_loop_stack_output, the backward's while_loop): carried and
    additional input counts and the body's output count;
  - "aot_mincut_saved": what AOTAutograd's min_cut_rematerialization_partition
    saves for the program (aot_function on the traced function): the
    number of saved values, their bytes at the inputs' sizes, each value's
    dtype and shape, and whether aot_function ran with dynamic shapes
    (python/tests/test_hop_joint.py requires hopctl's min-cut to save no
    more, in count and in bytes; pkg/jointgraph's TestMincutSavesNoMoreThanAOT
    the count, and the bytes where hopctl's saved sizes are static);
  - for the programs with in-place ops in a HOP body: "trace_inplace", those
    ops per subgraph of the trace, and "aot_inplace", those left in the
    subgraphs of the graphs AOTAutograd compiles (functionalized).

Run inside the torch 2.14 chroot, from the repository root (and in 2.6's,
for the programs 2.6 differentiates, TORCH26):

    scripts/torch.sh 2.14 -- env PYTHONPATH=python python3 python/tools/hop_joint_corpus.py testdata/hops_real/joint
    scripts/torch.sh 2.6 -- env PYTHONPATH=python python3 python/tools/hop_joint_corpus.py testdata/hops_real/torch2.6/joint

pkg/jointgraph/hop_real_test.go builds hopctl's joint of every program and
compares it with the structure recorded here; python/tests/test_hop_joint.py
runs hopctl's joints in torch and compares their gradients with autograd's.
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch

import torch._higher_order_ops.associative_scan  # noqa: E402,F401  (registers the HOP)

sys.path.insert(0, HERE)
import hop_joint_programs  # noqa: E402


def _f(*shape):
    return torch.randn(*shape)


# associative_scan: the HOP itself, as test_control_flow's make_fx tests
# call it (the user-facing wrapper compiles with Dynamo).

def p_assoc_grad(xs):  # AssociativeScanTests, with requires_grad (generic combine_fn)
    return torch.ops.higher_order.associative_scan(lambda a, b: (a * b + b.sin(),), [xs], ())


def p_assoc_grad_pytree(xs, ys):  # AssociativeScanTests: two xs leaves
    return torch.ops.higher_order.associative_scan(
        lambda a, b, c, d: (a * c + c.sin(), b + d * a), [xs, ys], ())


def p_assoc_lifted(xs, w):  # trigger: a lifted tensor (additional_inputs) while grad flows
    return torch.ops.higher_order.associative_scan(lambda a, b, w: (a * b * w,), [xs], (w,))


# cond with a SymInt operand (dynamic shapes): the backward branches return
# one gradient per tensor operand (filter_with_masks).

def p_cond_symint(x, w):  # test_cond_autograd_symint (a SymInt operand), tracing_mode="symbolic"
    n = x.size(0)
    return torch.ops.higher_order.cond(x.sum() > 0, lambda x, w, n: ((x * w).sin() * n,),
                                       lambda x, w, n: (x.cos() * w + n,), (x, w, n))[0]


def p_cond_symint_dynamo(x, w):  # the same program through torch.cond: Dynamo (dynamic=True) lifts the sizes
    n = x.size(0)
    return torch.cond(x.sum() > 0, lambda x, w: (x * w).sin() * n, lambda x, w: x.cos() * w + n, (x, w))


def p_cond_tensors(x, w):  # near miss: tensor operands only
    return torch.ops.higher_order.cond(x.sum() > 0, lambda x, w: ((x * w).sin(),),
                                       lambda x, w: (x.cos() * w,), (x, w))[0]


# torch 2.6 marks regions with mark_compile_region (2.14 keeps it as an alias).
_region = getattr(torch.compiler, "nested_compile_region", None)
if _region is None:
    from torch._higher_order_ops.invoke_subgraph import mark_compile_region as _region


# invoke_subgraph: regions marked with torch.compiler.nested_compile_region,
# captured by Dynamo (test_invoke_subgraph.py's TestInvokeSubgraphCompile).

@_region
def gn(x, y):
    return torch.mul(x, y).sin()


def p_invoke_twice(x, y):  # test_simple: one region called twice
    return gn(x, y) * 2 + gn(x, y).cos()


def p_invoke_once(x, y):  # test_simple: called once (inlined by default)
    return gn(x, y) * 2


def p_invoke_no_grad_operand(x, y):  # trigger: y does not require grad (a None gradient slot)
    return gn(x, y) + gn(x, y)


@_region
def gn2(x, y):
    return torch.mul(x, y).sin(), y.cos()


def p_invoke_output_no_grad(x, y):  # trigger: an output that needs no grad gets no tangent (filtered grad_outs)
    a, b = gn2(x, y)
    c, d = gn2(x, y)
    return a + c, b * d


@_region
def gn_mut(x, y):
    x.add_(1)
    return torch.mul(x, y).sin()


def p_invoke_mutate(x, y):  # trigger: the region writes its input; torch 2.14 does not train it
    return gn_mut(x, y) + gn_mut(x, y)


@_region
def gn_outer(x, y):
    return gn(x, y) * gn(y, x).cos()


def p_invoke_nested(x, y):  # a region calling a region (nested invoke_subgraph)
    return gn_outer(x, y) + gn_outer(y, x)


# name, PyTorch test, function, inputs, indices of the inputs requiring grad,
# tracing mode, Dynamo's inline_single_use_invoke_subgraph (None: no Dynamo;
# "dynamic": Dynamo with dynamic shapes).
PROGRAMS = [
    ("assoc_grad", "test_control_flow.py AssociativeScanTests (autograd, generic combine_fn)", p_assoc_grad, lambda: [_f(5, 3)], [0], "fake", None),
    ("assoc_grad_pytree", "test_control_flow.py AssociativeScanTests (autograd, two xs leaves)", p_assoc_grad_pytree,
     lambda: [_f(5, 3), _f(5, 3)], [0, 1], "fake", None),
    ("assoc_grad_symbolic", "test_control_flow.py AssociativeScanTests (autograd, dynamic shapes)", p_assoc_grad,
     lambda: [_f(5, 3)], [0], "symbolic", None),
    ("assoc_lifted", "test_control_flow.py AssociativeScanTests (autograd through lifted parameters: additional_inputs)", p_assoc_lifted,
     lambda: [_f(5, 3), _f(3)], [0, 1], "fake", None),
    ("cond_symint", "test_cond_autograd_simple (a SymInt operand, dynamic shapes)", p_cond_symint,
     lambda: [_f(3, 4).abs(), _f(3, 4)], [0, 1], "symbolic", None),
    ("cond_symint_dynamo", "test_cond_autograd_simple (torch.compile(dynamic=True): SymInt operands lifted by Dynamo)",
     p_cond_symint_dynamo, lambda: [_f(3, 4).abs(), _f(3, 4)], [0, 1], "symbolic", "dynamic"),
    ("cond_tensors", "test_cond_autograd_simple (near miss: tensor operands)", p_cond_tensors,
     lambda: [_f(3, 4).abs(), _f(3, 4)], [0, 1], "symbolic", None),
    ("invoke_twice", "test_invoke_subgraph.py test_simple (the region called twice)", p_invoke_twice, lambda: [_f(3, 4), _f(3, 4)], [0, 1], "fake", True),
    ("invoke_once_kept", "test_invoke_subgraph.py test_simple (inline_single_use_invoke_subgraph=False)", p_invoke_once,
     lambda: [_f(3, 4), _f(3, 4)], [0, 1], "fake", False),
    ("invoke_once_inlined", "test_invoke_subgraph.py test_simple (inline_single_use_invoke_subgraph=True)", p_invoke_once,
     lambda: [_f(3, 4), _f(3, 4)], [0, 1], "fake", True),
    ("invoke_no_grad_operand", "test_invoke_subgraph.py test_simple (an operand without grad)", p_invoke_no_grad_operand,
     lambda: [_f(3, 4), _f(3, 4)], [0], "fake", True),
    ("invoke_mutate", "test_invoke_subgraph.py (input mutation, trained)", p_invoke_mutate,
     lambda: [_f(3, 4), _f(3, 4)], [1], "fake", False),
    ("invoke_nested", "test_invoke_subgraph.py test_nested (a region calling a region)", p_invoke_nested,
     lambda: [_f(3, 4), _f(3, 4)], [0, 1], "fake", False),
    ("invoke_output_no_grad", "test_invoke_subgraph.py test_simple (called twice, an output without grad)", p_invoke_output_no_grad,
     lambda: [_f(3, 4), _f(3, 4)], [0], "fake", True),
    # while_loop and in-place ops in HOP bodies (hop_joint_programs.py)
    *hop_joint_programs.PROGRAMS,
]


def inplace_in_subgraphs(gm):
    """The in-place ops (mutable OpOverloads) in gm's subgraphs, by subgraph."""
    out = {}
    for name, m in gm.named_modules():
        if not name or not isinstance(m, torch.fx.GraphModule):
            continue
        ops = sorted({"aten.%s.%s" % (n.target._opname, n.target._overloadname) for n in m.graph.nodes
                      if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
                      and n.target._schema.is_mutable})
        if ops:
            out[name] = ops
    return out


def aot_inplace(f, ins):
    """In-place ops in the subgraphs of the forward and backward graphs
    AOTAutograd compiles for f (functionalized, as PyTorch's joint is)."""
    from functorch.compile import aot_function
    graphs = []

    def comp(g, _):
        graphs.append(g)
        return g
    outs = [o for o in flat(aot_function(f, comp, comp, dynamic=True)(*ins)) if isinstance(o, torch.Tensor) and o.requires_grad]
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
    res = {}
    for g in graphs:
        res.update(inplace_in_subgraphs(g))
    return res


def nbytes(v):
    """The bytes a saved value holds: a tensor's elements, nothing for a
    symbolic int (AOTAutograd passes those as Python ints)."""
    return v.numel() * v.element_size() if isinstance(v, torch.Tensor) else 0


def has_while_loop(gm):
    return any(n.op == "call_function" and "while_loop" in str(n.target)
               for m in gm.modules() if isinstance(m, torch.fx.GraphModule) for n in m.graph.nodes)


def aot_mincut_saved(f, args, dynamic):
    """What AOTAutograd's min_cut_rematerialization_partition saves for f:
    aot_function with that partition_fn, the forward run once on args and
    its saved outputs (the backward's inputs other than tangents, the
    forward's last outputs) counted, with their bytes at this run's sizes
    (a while_loop's stacked carries have this run's length). dynamic:
    aot_function's dynamic shapes (a symbolic trace, and while_loop, whose
    stacked carries have an unbacked length only a ShapeEnv can trace)."""
    from functorch.compile import aot_function, min_cut_rematerialization_partition
    seen = {}

    def fw_compiler(g, _):
        def run(*a):
            seen["fw_outs"] = g(*a)
            return seen["fw_outs"]
        return run

    def bw_compiler(g, _):
        seen["bw"] = g
        return g
    outs = [o for o in flat(aot_function(f, fw_compiler, bw_compiler, partition_fn=min_cut_rematerialization_partition,
                                         dynamic=dynamic)(*args))
            if isinstance(o, torch.Tensor) and o.requires_grad]
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
    ph = [n for n in seen["bw"].graph.nodes if n.op == "placeholder" and not n.name.startswith("tangents")]
    saved = list(seen["fw_outs"])[len(seen["fw_outs"]) - len(ph):]
    return {"count": len(ph), "bytes": sum(nbytes(v) for v in saved), "dynamic_shapes": dynamic,
            "values": [describe(v) for v in saved]}


def describe(v):
    if isinstance(v, torch.Tensor):
        return "%s%s" % (str(v.dtype).replace("torch.", ""), list(v.shape))
    return type(v).__name__


def inputs_of(make, rg):
    torch.manual_seed(0)
    ins = make()
    for i in rg:
        ins[i].requires_grad_()
    return ins


def dynamo_graph(fn, ins, inline):
    """The graph Dynamo captures for fn, and its example inputs: with the
    inlining switch set (True/False), or with dynamic shapes ("dynamic"),
    where the graph also takes the sizes as SymInt inputs."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append((gm, example_inputs))
        return gm

    torch._dynamo.reset()
    try:
        if inline == "dynamic":
            for x in ins:
                torch._dynamo.mark_dynamic(x, 0)
            torch.compile(fn, backend=backend, fullgraph=True, dynamic=True)(*ins)
        elif hasattr(torch._dynamo.config, "inline_single_use_invoke_subgraph"):
            with torch._dynamo.config.patch(inline_single_use_invoke_subgraph=inline):
                torch.compile(fn, backend=backend, fullgraph=True)(*ins)
        else:  # torch 2.6: no inlining switch (regions are kept)
            torch.compile(fn, backend=backend, fullgraph=True)(*ins)
    except RuntimeError:
        if not graphs:
            raise
        # Captured, then refused running it with grad (a HOP torch does
        # not train): the refusal is the program's verdict (build).
    return graphs[0]


def forward_fn(fn, ins, inline):
    """What make_fx traces — the program, or the graph Dynamo captured —
    its inputs, and their layout: per graph input, the index of the
    program input it is, or {"int": size} for a size Dynamo lifted."""
    if inline is None:
        return fn, list(ins), list(range(len(ins)))
    gm, example = dynamo_graph(fn, ins, inline)
    args, layout = [], []
    for e in example:
        if isinstance(e, torch.Tensor):
            k = next(i for i, x in enumerate(ins) if x is e)
            args.append(ins[k])
            layout.append(k)
        else:
            args.append(int(e))
            layout.append({"int": int(e)})
    return gm, args, layout


def graph_args(layout, ins):
    """The graph's inputs for the program inputs ins (forward_fn's layout)."""
    return [ins[k] if isinstance(k, int) else k["int"] for k in layout]


def flat(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def grad_error(fn, ins):
    """torch's message differentiating fn through its HOP, or None."""
    try:
        outs = [o for o in flat(fn(*ins)) if isinstance(o, torch.Tensor) and o.requires_grad]
        torch.autograd.grad(outs, [x for x in ins if x.requires_grad], [torch.ones_like(o) for o in outs],
                            allow_unused=True)
        return None
    except Exception as e:  # noqa: BLE001 (torch's refusal is the verdict)
        return str(e).strip().splitlines()[0]


def torch_joint(f, ins, mode):
    """The structure of torch's backward through the HOPs of f: make_fx of
    torch.autograd.grad through it."""
    from torch.fx.experimental.proxy_tensor import make_fx
    n = len(ins)
    outs = [o for o in flat(f(*ins)) if isinstance(o, torch.Tensor) and o.requires_grad]
    ts = [torch.randn(o.shape) for o in outs]

    def joint(*a):
        xs = a[:n]
        o = [v for v in flat(f(*xs)) if isinstance(v, torch.Tensor) and v.requires_grad]
        return torch.autograd.grad(o, [x for x in xs if isinstance(x, torch.Tensor) and x.requires_grad],
                                   list(a[n:]), allow_unused=True)

    # Under a TracingContext, as AOTAutograd traces: its invoke_subgraph
    # cache numbers the backward graphs per identifier and tangent layout
    # (bw_<identifier>_<n>; without it n is None).
    with torch._guards.tracing(torch._guards.TracingContext(None)):
        gm = make_fx(joint, tracing_mode=mode)(*ins, *ts)
    out = {"invoke_subgraph": [], "cond_backward_outputs": [], "ops": [], "while_loops": []}
    ops = set()
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        t = node.target
        if t is torch.ops.higher_order.invoke_subgraph:
            sub = getattr(gm, node.args[0].target)
            res = [nd for nd in sub.graph.nodes if nd.op == "output"][0].args[0]
            inner = sorted(nd.args[1] for nd in sub.graph.nodes
                           if nd.op == "call_function" and nd.target is torch.ops.higher_order.invoke_subgraph)
            out["invoke_subgraph"].append({"identifier": node.args[1], "graph": node.args[0].target,
                                           "inner": inner, "operands": len(node.args) - 2,
                                           "none_outputs": [k for k, r in enumerate(res) if r is None],
                                           "outputs": len(res)})
        elif t in (torch.ops.higher_order.while_loop, getattr(torch.ops.higher_order, "while_loop_stack_output", None)):
            body = getattr(gm, node.args[1].target)
            res = [nd for nd in body.graph.nodes if nd.op == "output"][0].args[0]
            out["while_loops"].append({"op": str(t), "carried": len(node.args[2]), "additional": len(node.args[3]),
                                       "body_outputs": len(res)})
        elif t is torch.ops.higher_order.cond:
            res = [nd for nd in getattr(gm, node.args[1].target).graph.nodes if nd.op == "output"][0].args[0]
            out["cond_backward_outputs"].append(len(res))
        elif isinstance(t, torch._ops.OpOverload):
            ops.add("aten.%s.%s" % (t._opname, t._overloadname))
    # cond: the forward cond comes first; its outputs are not a backward's
    out["cond_backward_outputs"] = out["cond_backward_outputs"][1:]
    out["ops"] = sorted(ops)
    return out


# The programs torch 2.6 differentiates as 2.14 does, or with its own
# backward structure (invoke_subgraph's ___forward_/___backward_ calls): 2.6
# has no autograd for associative_scan and no inlining switch.
TORCH26 = {"cond_symint", "cond_tensors", "invoke_twice", "invoke_no_grad_operand"}


def _torch_before_2_14():
    return tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 14)


def build(outdir, names=None):
    from torch.fx.experimental.proxy_tensor import make_fx
    import hopctl_torch
    os.makedirs(outdir, exist_ok=True)
    doc = {"torch_version": torch.__version__.split("+")[0], "programs": {}}
    for name, test, fn, make, rg, mode, inline in PROGRAMS:
        if names and name not in names or _torch_before_2_14() and name not in TORCH26:
            continue
        ins = inputs_of(make, rg)
        v = {"pytorch_test": test, "requires_grad": rg, "tracing_mode": mode, "inline_single_use_invoke_subgraph": inline}
        f, args, v["graph_inputs"] = forward_fn(fn, ins, inline)
        # torch's verdict: its refusal tracing the program with grad (as
        # AOTAutograd runs it), else differentiating it eagerly. A program
        # torch refuses is traced with grad off (the forward torch runs
        # before the refusal); the inputs keep requires_grad in the file.
        try:
            gm = make_fx(f, tracing_mode=mode)(*args)
            v["error"] = grad_error(fn, ins)
        except RuntimeError as e:
            v["error"] = str(e).strip().splitlines()[0]
        if v["error"] is not None:
            with torch.no_grad():
                gm = make_fx(f, tracing_mode=mode)(*args)
        ex = args
        if mode == "symbolic":
            # A symbolic trace keeps its symbolic placeholders (real inputs
            # would make them concrete and leave the sizes inside unbound),
            # marked requires_grad as the real inputs are.
            ex = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
            ex = [e.detach().requires_grad_(x.requires_grad) if isinstance(e, torch.Tensor) else e
                  for e, x in zip(ex, args)]
        hopctl_torch.export(gm, os.path.join(outdir, name + ".pb"), example_inputs=ex)
        if name.endswith("_inplace") or name == "while_mutation":
            v["trace_inplace"] = inplace_in_subgraphs(gm)
            v["aot_inplace"] = aot_inplace(f, ins)
        if v["error"] is None:
            v["torch_joint"] = torch_joint(f, args, mode)
            v["aot_mincut_saved"] = aot_mincut_saved(f, args, mode == "symbolic" or has_while_loop(gm))
        doc["programs"][name] = v
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    doc = build(args.outdir, args.names)
    path = os.path.join(args.outdir, "joint.json")
    if args.names and os.path.exists(path):
        # Some programs re-traced: the others keep their entries.
        with open(path) as fh:
            old = json.load(fh)
        old["programs"].update(doc["programs"])
        old["torch_version"] = doc["torch_version"]
        doc = old
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    for name, v in doc["programs"].items():
        print("%-24s %s" % (name, v["error"] or "ok"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
