#!/usr/bin/env python3
"""testdata/hops from real traces: PyTorch's control-flow programs, traced by torch 2.14.

Every file of testdata/hops that PyTorch can trace is written here; only the
programs PyTorch refuses to trace (HANDWRITTEN below) stay hand-written in
testdata/hops, each citing the PyTorch test it mirrors. For each program this
writes OUTDIR/<name>.pbtxt: the header (what the program shows, the PyTorch
test it mirrors, the `# expect` and `# want` lines of testdata/hops/README.md,
and the program's source, which the stack traces point at), then the trace
exported by hopctl_torch.

Where the expectations come from (all from torch, none typed in):

* `# expect`, for a graph that calls no HOP: torch's own
  check_input_alias_and_mutation_return_outputs (torch/_higher_order_ops/utils.py)
  on that graph, mutated_inputs in first-write order without repeats (torch
  lists one entry per write; hopctl's JSON has no repeats).
* `# expect`, for a graph that calls HOPs (the root, and a subgraph that nests
  one): torch's static checker skips HOP calls, so the values are torch's
  runtime observation instead (python/tools/alias_oracle.py): the graph runs
  eagerly, HOPs included, on the values it receives when the root runs on the
  program's inputs (which take the defect's path: pred true, loops that run).
* `# want`: at every HOP call, PyTorch's _check_alias_and_mutation applied to
  the expectations of the subgraphs it calls (aliasing first, then mutation,
  with torch's names: cond_true/cond_false, cond_fn/body_fn, scan, map,
  associative_scan; invoke_subgraph allows mutation). Checked against torch
  itself: tracing the program through functionalization
  (make_fx(torch.func.functionalize(f))) must succeed exactly when no want
  line was derived, and otherwise raise with one of the derived messages.

Run in the torch 2.14 chroot from the repository root (rewrites the files):

    scripts/torch.sh 2.14 -- env PYTHONPATH=python python3 python/tools/hops_testdata.py testdata/hops

python/tests/test_hops_testdata.py re-derives every file in the running torch
and compares (on 2.14: the whole file; elsewhere: the expectations).
"""

import argparse
import inspect
import os
import re
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch
sys.path.insert(0, HERE)

import torch._higher_order_ops.associative_scan  # noqa: E402,F401  (registers the HOP)

HOP = torch.ops.higher_order


# The programs. HOPs are called as the operators themselves, as PyTorch's
# make_fx tests do (the user-facing while_loop/scan/map wrappers compile the
# call with Dynamo first), with the call forms the files document.

def p_cond(x, y):
    def true_fn(x, y):
        return (x.sin() + y,)

    def false_fn(x, y):
        return (x.cos() * y,)
    pred = x.sum() > 0
    return torch.cond(pred, true_fn, false_fn, (x, y))


def p_cond_mutates_view(pred, x):
    def true_fn(x):
        v = x.view(6)
        v.add_(1)
        return (x.sin(),)

    def false_fn(x):
        return (x.cos(),)
    return HOP.cond(pred, true_fn, false_fn, (x,))


def p_cond_returns_input(pred, x):
    def true_fn(x):
        return (x,)

    def false_fn(x):
        return (x.cos(),)
    return HOP.cond(pred, true_fn, false_fn, (x,))


def p_cond_returns_view(pred, x):
    def true_fn(x):
        return (x.t(),)

    def false_fn(x):
        return (x.cos().t(),)
    return HOP.cond(pred, true_fn, false_fn, (x,))


def p_while_loop(i, x, w):
    def cond_fn(i, x, w):
        return i < 3

    def body_fn(i, x, w):
        return (i + 1, (x @ w).relu())
    return HOP.while_loop(cond_fn, body_fn, (i, x), (w,))


def p_while_body_mutates_carry(i, x, w):
    def cond_fn(i, x, w):
        return i < 3

    def body_fn(i, x, w):
        x.add_(w)
        return i + 1, x.sin()
    return HOP.while_loop(cond_fn, body_fn, (i, x), (w,))


def p_scan(h, xs, w):
    def combine_fn(h, x, w):
        h_next = (h @ w + x).tanh()
        return h_next, h_next.clone()
    return HOP.scan(combine_fn, [h], [xs], (w,))


def p_scan_combine_aliases(h, xs):
    def combine_fn(h, x):
        return h + x, x.view(8)
    return HOP.scan(combine_fn, [h], [xs], ())


def p_map(xs, y):
    def body(x, y):  # map() hands map_impl a body returning a flat list
        return [(x * y).sin()]
    return HOP.map_impl(body, [xs], [y])[0]


def p_map_mutates(xs, y):
    def body(x, y):
        y.add_(x)
        return [x * y]
    return HOP.map_impl(body, [xs], [y])[0]


def p_associative_scan(xs, ys):
    def combine_fn(a0, a1, b0, b1):
        return (a0 + b0, a1 * b1)
    return HOP.associative_scan(combine_fn, [xs, ys], ())


def _nested3(mutate):
    def combine_fn(h, x):
        if mutate:
            x.mul_(2)
        s = h + x
        return s.sin(), s

    def true_fn(i, x, xs):
        def cond_fn(i, x, xs):
            return i < 3

        def body_fn(i, x, xs):
            carry, ys = HOP.scan(combine_fn, [x], [xs], ())
            return i + 1, carry
        return (HOP.while_loop(cond_fn, body_fn, (i, x), (xs,))[1],)

    def false_fn(i, x, xs):
        return (x.cos(),)
    return true_fn, false_fn


def p_nested3(pred, i, x, xs):
    true_fn, false_fn = _nested3(False)
    return HOP.cond(pred, true_fn, false_fn, (i, x, xs))


def p_nested3_mutation(pred, i, x, xs):
    true_fn, false_fn = _nested3(True)
    return HOP.cond(pred, true_fn, false_fn, (i, x, xs))


@torch.compiler.nested_compile_region
def block(x, y):
    return (x * y).sin()


def p_invoke_subgraph(x, y):
    a = block(x, y)
    return block(a, y)


def _aot_inference_graph(fn, inputs):
    """The inference graph AOTAutograd compiles for torch.compile(fn) under
    no_grad (Dynamo writes invoke_subgraph; make_fx inlines the region)."""
    from functorch.compile import make_boxed_func
    from torch._functorch.aot_autograd import aot_module_simplified
    got = []

    def backend(gm, example_inputs):
        def compiler(g, _):
            got.append(g)
            return make_boxed_func(g.forward)
        return aot_module_simplified(gm, example_inputs, fw_compiler=compiler, inference_compiler=compiler)

    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(fn, backend=backend, fullgraph=True)(*[x.clone() for x in inputs])
    if len(got) != 1:
        raise RuntimeError("expected one AOT graph, got %d" % len(got))
    return got[0]


def _f(*s):
    return torch.randn(*s)


def _pos(*s):  # positive entries: pred = x.sum() > 0 takes the true branch
    return torch.rand(*s) + 0.1


# (name, what it shows, PyTorch test mirrored in test/functorch/test_control_flow.py, program, inputs)
PROGRAMS = [
    ("cond", "Clean cond: two functional branches over operands (x, y); pred computed in the graph.",
     "TestControlFlowTraced.test_cond_functionalized", p_cond, lambda: [_pos(4, 8), _f(4, 8)]),
    ("cond_mutates_view", "Defect: the true branch writes its operand through a view (v = x.view(6); v.add_(1)).",
     "TestControlFlowTraced.test_cond_functionalized_input_mutation_on_true_brancte (so spelled)", p_cond_mutates_view,
     lambda: [torch.tensor(True), _f(2, 3)]),
    ("cond_returns_input", "Defect: the true branch returns its operand unchanged.",
     "TestControlFlowTraced.test_cond_functionalized_output_alias_input", p_cond_returns_input,
     lambda: [torch.tensor(True), _f(2, 3)]),
    ("cond_returns_view", "Defect: the true branch returns x.t(), a view of its operand; the false branch a "
     "view of a fresh cos, which is no alias.",
     "TestControlFlowTraced.test_cond_functionalized_input_aliasing_with_aot_func", p_cond_returns_view,
     lambda: [torch.tensor(True), _f(2, 3)]),
    ("while_loop", "Clean while_loop: an int64 0-dim counter and x carried, w an additional input.",
     "TestControlFlowTraced.test_while_loop_tracing", p_while_loop,
     lambda: [torch.tensor(0), _f(2, 3), _f(3, 3)]),
    ("while_body_mutates_carry", "Defect: body_fn writes the carried x (x.add_(w)) and returns a fresh sin.",
     "TestControlFlowTraced.test_while_loop_functionalize (its simple_with_mutation program writing the carry, "
     "not a clone of it)", p_while_body_mutates_carry,
     lambda: [torch.tensor(0), _f(3), _f(3)]),
    ("scan", "Clean scan: init h, xs, additional input w; the output y is a clone of the next carry.",
     "TestControlFlow.test_scan_simple_graph", p_scan, lambda: [_f(4), _f(5, 4), _f(4, 4)]),
    ("scan_combine_aliases", "Defect: combine_fn returns x.view(8), a view of its xs slice, as y.",
     "TestControlFlowTraced.test_map_functionalized_elem_alias (its scan counterpart)", p_scan_combine_aliases, lambda: [_f(8), _f(5, 8)]),
    ("map", "Clean map_impl: the body gets the xs slice, then the pos_arg.",
     "TestControlFlowTraced.test_map_functionalized", p_map, lambda: [_f(3, 2), _f(2)]),
    ("map_mutates", "Defect: the body writes the pos_arg y (y.add_(x)).",
     "TestControlFlowTraced.test_map_functionalized_arg_mutation", p_map_mutates, lambda: [_f(3, 2), _f(2)]),
    ("associative_scan", "Clean associative_scan over (xs, ys): the combine placeholders are (*lhs, *rhs).",
     "AssociativeScanTests.test_associative_scan_tuple (its tuple_fct)", p_associative_scan, lambda: [_f(5, 3), _f(5, 3)]),
    ("nested3", "Clean, three HOPs deep: cond -> while_loop (in true_graph_0) -> scan (in its body).",
     "TestControlFlowTraced.test_while_loop_nested_traced (a while_loop in a cond, a scan in its body)", p_nested3,
     lambda: [torch.tensor(True), torch.tensor(0), _f(4), _f(5, 4)]),
    ("nested3_mutation", "Defect, three HOPs deep: like nested3, but the scan combine_fn does x.mul_(2) on its "
     "xs slice; the slice comes from the root input xs through the cond operands and the while_loop "
     "additional inputs. Reported at every call site on the way out.",
     "TestControlFlowTraced.test_cond_functionalized_nested_input_mutation (the write three HOPs deep)", p_nested3_mutation,
     lambda: [torch.tensor(True), torch.tensor(0), _f(4), _f(5, 4)]),
    ("invoke_subgraph", "Clean invoke_subgraph: a nested_compile_region called twice; AOTAutograd's inference "
     "graph (traced by torch.compile under no_grad) calls repeated_subgraph0 through two get_attr nodes.",
     "TestInvokeSubgraphCompile.test_module_forward (test/higher_order_ops/test_invoke_subgraph.py)", p_invoke_subgraph,
     lambda: [_f(4, 8), _f(4, 8)]),
]

# How a program is traced: make_fx(tracing_mode="fake") unless named here.
AOT = {"invoke_subgraph"}

# Functions a program calls whose source the header shows too.
SOURCES = {"nested3": [_nested3], "nested3_mutation": [_nested3], "invoke_subgraph": [block]}

# Programs PyTorch refuses to trace: their files stay hand-written (graphs
# as torch would write them had it accepted the program), each citing the
# PyTorch test it mirrors; python/tests/test_hops_testdata.py checks that
# torch still refuses them with the message of the file's want lines.

def r_while_loop_meta_mismatch(i, x):
    return HOP.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.t().contiguous()), (i, x), ())


def r_scan_carry_mismatch(h, xs):
    return HOP.scan(lambda h, x: (torch.cat([h, x]), h + x), [h], [xs], ())


HANDWRITTEN = {
    "while_loop_meta_mismatch": ("TestControlFlowTraced.test_while_loop_op_mismatch_in_meta",
                                 r_while_loop_meta_mismatch, lambda: [torch.tensor(0), _f(2, 3)]),
    "scan_carry_mismatch": ("TestControlFlow.test_scan_init_wrong_shape", r_scan_carry_mismatch,
                            lambda: [_f(4), _f(5, 4)]),
}


def refusal(name):
    """torch's refusal of a hand-written file's program: the exception text."""
    from torch.fx.experimental.proxy_tensor import make_fx
    _, fn, make_inputs = HANDWRITTEN[name]
    try:
        make_fx(fn, tracing_mode="fake")(*make_inputs())
    except Exception as e:  # the refusal is the point
        return "%s: %s" % (type(e).__name__, e)
    return None


def _dedup(xs):
    out = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out


def _static(gm):
    """torch's check_input_alias_and_mutation_return_outputs, as hopctl's JSON has it."""
    from torch._higher_order_ops.utils import check_input_alias_and_mutation_return_outputs as chk
    ii, io, oo, mut = chk(gm)[:4]
    return {"mutated_inputs": _dedup(mut), "inp_inp_alias": dict(sorted(ii.items())),
            "inp_out_alias": dict(sorted(io.items())), "out_out_alias": dict(sorted(oo.items()))}


def _hop_calls(gm):
    return [n for n in gm.graph.nodes if n.op == "call_function" and isinstance(n.target, torch._ops.HigherOrderOperator)]


def _subgraphs(gm):
    return [(q, m) for q, m in gm.named_modules() if q and isinstance(m, torch.fx.GraphModule)]


def _runtime(gm, inputs):
    """torch's runtime observation of every graph that calls a HOP: the
    root on inputs, each nested caller on the values it first receives."""
    import alias_oracle
    callers = {q: m for q, m in _subgraphs(gm) if _hop_calls(m)}
    seen, hooks = {}, []
    for q, m in callers.items():
        def pre(mod, args, q=q):
            seen.setdefault(q, [a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        hooks.append(m.register_forward_pre_hook(pre))
    try:
        root = alias_oracle.observe(gm, [x.clone() for x in inputs])
    finally:
        for h in hooks:
            h.remove()
    out = {"": root}
    for q, m in callers.items():
        if q not in seen:
            raise RuntimeError("subgraph %s never ran: the inputs must take its path" % q)
        out[q] = alias_oracle.observe(m, seen[q])
    return {q: {"mutated_inputs": v["mutated_inputs"],
                "inp_inp_alias": {int(k): x for k, x in v["inp_inp_alias"].items()},
                "inp_out_alias": {int(k): x for k, x in v["inp_out_alias"].items()},
                "out_out_alias": {int(k): x for k, x in v["out_out_alias"].items()}} for q, v in out.items()}


def _fmt_list(xs):
    return "[" + ",".join(str(x) for x in xs) + "]"


def _fmt_map(m):
    return "{" + ",".join("%d:%d" % (k, v) for k, v in sorted(m.items())) + "}"


# torch's names for each HOP's subgraphs, by argument position
# (_check_alias_and_mutation's first argument at each HOP's functionalization).
_SUB_NAMES = {"cond": {1: "cond_true", 2: "cond_false"}, "while_loop": {0: "cond_fn", 1: "body_fn"},
              "scan": {0: "scan"}, "map_impl": {0: "map"}, "associative_scan": {0: "associative_scan"},
              "invoke_subgraph": {0: None}}


def _wants(gm, expects):
    """(graph, node, message) for every HOP call whose subgraph aliases or
    mutates, as _check_alias_and_mutation raises."""
    wants = []
    graphs = [("", gm)] + _subgraphs(gm)
    for q, m in graphs:
        for n in _hop_calls(m):
            names = _SUB_NAMES[n.target._name]
            for pos, torch_name in sorted(names.items()):
                a = n.args[pos]
                sub = a.target if isinstance(a, torch.fx.Node) and a.op == "get_attr" else None
                if sub is None:
                    continue
                e = expects[(q + "." if q else "") + sub]
                if e["inp_inp_alias"] or e["inp_out_alias"] or e["out_out_alias"]:
                    wants.append((q, n.name, "%s might be aliasing the input or the output!" % torch_name))
                elif e["mutated_inputs"] and torch_name is not None:
                    wants.append((q, n.name, "%s might be modifying the input!" % torch_name))
    return wants


def _functionalize_verdict(fn, inputs):
    from torch.fx.experimental.proxy_tensor import make_fx
    try:
        make_fx(torch.func.functionalize(fn), tracing_mode="fake")(*[x.clone() for x in inputs])
        return None
    except Exception as e:  # the HOP's functionalization refused the program
        chain, seen = [], set()
        while e is not None and id(e) not in seen:
            seen.add(id(e))
            chain.append(str(e))
            e = e.__cause__ or e.__context__
        return "\n".join(chain)


def _anchor_stack_traces(fn):
    """Makes make_fx record stack traces in fn and the functions nested in it.

    make_fx(record_stack_traces=True) keeps only frames of functions named
    `forward`, or registered as anchors (torch.fx.proxy, torch 2.14), and
    only in the root graph: the tracers of HOP subgraphs are new
    PythonKeyTracers that record none; the class default turns them on.
    Paths are made relative to the repository (the files must not depend on
    where the checkout is)."""
    import torch.fx.proxy as fxp
    from torch.fx.experimental.proxy_tensor import PythonKeyTracer
    PythonKeyTracer.record_stack_traces = True
    PythonKeyTracer._record_forward_stack_traces_only = True
    reg = getattr(fxp, "_register_stack_trace_anchor", None)
    anchors = getattr(fxp, "_STACK_TRACE_ANCHORS", None)
    if reg is None or anchors is None:
        return
    todo = [fn.__code__]
    while todo:
        code = todo.pop()
        anchors.add((code.co_filename, code.co_name))
        todo += [c for c in code.co_consts if isinstance(c, type(code))]


def derive(name, fn, make_inputs):
    """Traces one program; returns (gm, inputs, expects {graph: four results}, wants)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    for f in SOURCES.get(name, []) + [fn]:
        _anchor_stack_traces(f)
    # torch.cond compiles its call with Dynamo, whose automatic dynamic
    # shapes would turn sizes seen with other values earlier in this
    # process into symbols: trace from Dynamo's initial state.
    torch._dynamo.reset()
    torch.manual_seed(0)
    inputs = make_inputs()
    if name in AOT:
        gm = _aot_inference_graph(fn, inputs)
    else:
        gm = make_fx(fn, tracing_mode="fake", record_stack_traces=True)(*[x.clone() for x in inputs])
    # The files must not depend on where the checkout is, nor on what ran
    # before in the process: repository-relative paths, no numbers of
    # generated code (<eval_with_key>.N) and no autograd sequence numbers.
    repo = os.path.dirname(os.path.dirname(HERE)) + os.sep
    for _, m in [("", gm)] + _subgraphs(gm):
        for n in m.graph.nodes:
            n.meta.pop("seq_nr", None)
            if n.meta.get("stack_trace"):
                st = n.meta["stack_trace"].replace(repo, "")
                n.meta["stack_trace"] = re.sub(r"<eval_with_key>\.\d+", "<eval_with_key>", st)
    expects = {}
    runtime = _runtime(gm, inputs)
    for q, m in [("", gm)] + _subgraphs(gm):
        expects[q] = runtime[q] if _hop_calls(m) else _static(m)
    wants = _wants(gm, expects)
    verdict = None if name in AOT else _functionalize_verdict(fn, inputs)  # torch.compile accepted it
    if not wants and verdict is not None:
        raise AssertionError("%s: no want line derived, but torch refuses it: %s" % (name, verdict))
    if wants and (verdict is None or not any(w[2] in verdict for w in wants)):
        raise AssertionError("%s: want lines %s, but torch's functionalization says %r" % (name, wants, verdict))
    return gm, inputs, expects, wants, verdict


def header(name, doc, test, fn, expects, wants, verdict):
    import textwrap
    src = "\n".join(inspect.getsource(f) for f in SOURCES.get(name, []) + [fn])
    where = test if "(test/" in test else "test/functorch/test_control_flow.py " + test
    how = "torch.compile -> AOTAutograd inference graph" if name in AOT else 'make_fx(tracing_mode="fake")'
    prov = ("Real trace: %s in torch %s, written by python/tools/hops_testdata.py (do not edit; "
            "regenerate: see that script). Mirrors PyTorch's %s. Expectations: torch's "
            "check_input_alias_and_mutation_return_outputs (graphs calling no HOP) or torch's runtime "
            "observation (graphs calling HOPs); want lines: _check_alias_and_mutation on those results."
            % (how, torch.__version__.split("+")[0], where))
    lines = ["# " + ln for ln in textwrap.wrap(doc, 98) + textwrap.wrap(prov, 98)]
    if verdict is not None:
        first = next((ln for ln in verdict.splitlines() if "might be" in ln), verdict.splitlines()[0])
        lines.append("# torch's functionalization refuses the program: %s" % first.strip())
    for q, e in expects.items():
        lines.append("# expect graph=%s mutated_inputs=%s inp_inp_alias=%s inp_out_alias=%s out_out_alias=%s"
                     % (q or '""', _fmt_list(e["mutated_inputs"]), _fmt_map(e["inp_inp_alias"]),
                        _fmt_map(e["inp_out_alias"]), _fmt_map(e["out_out_alias"])))
    for q, node, msg in wants:
        lines.append('# want graph=%s node=%s "%s"' % (q or '""', node, re.escape(msg).replace("\\ ", " ")))
    lines.append("#")
    lines.append("# The program (python/tools/hops_testdata.py; the stack traces point there):")
    lines += ["#   " + ln if ln else "#" for ln in src.rstrip().splitlines()]
    return "\n".join(lines) + "\n\n"


def write(outdir, name, names=None):
    import hopctl_torch
    for n, doc, test, fn, make_inputs in PROGRAMS:
        if n != name:
            continue
        gm, inputs, expects, wants, verdict = derive(n, fn, make_inputs)
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, n + ".pbtxt")
            hopctl_torch.export(gm, p, example_inputs=inputs, grad_enabled=torch.is_grad_enabled())
            with open(p) as f:
                body = f.read()
        out = header(n, doc, test, fn, expects, wants, verdict) + body
        dst = os.path.join(outdir, n + ".pbtxt")
        with open(dst + ".tmp", "w") as f:
            f.write(out)
        os.replace(dst + ".tmp", dst)
        return out
    raise KeyError(name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    for name, *_ in PROGRAMS:
        if args.names and name not in args.names:
            continue
        write(args.outdir, name)
        print("wrote", os.path.join(args.outdir, name + ".pbtxt"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
