#!/usr/bin/env python3
"""Dynamo-level graphs of the real-trace HOP corpus, and their verdicts.

Dynamo writes HOP subgraphs with torch-level targets (torch.sin,
operator.mul, x.add_ as a method call). Its HOP rules differ from the
make_fx-level ones (python/tools/hop_corpus.py): in torch 2.14 they depend
on the grad mode (torch/_dynamo/variables/higher_order_ops.py sets
supports_input_mutation = not torch.is_grad_enabled() for cond, while_loop,
scan and map), and AOTAutograd, which every real backend runs after Dynamo,
then refuses some of what Dynamo let through. torch 2.6's Dynamo checks
neither mutation nor aliasing; its AOTAutograd does.

For every program of GRAD_PROGRAMS and each grad mode ("grad", "nograd"),
this writes OUTDIR/<name>_<mode>.pb, the graph Dynamo hands its backend
(the file records the grad mode), and in OUTDIR/verdicts.json what
torch.compile(backend="aot_eager", fullgraph=True) of the program says in
that mode: "ok", or the type and the message of the rule that refused it.
Where Dynamo refuses the program (so it hands over no graph), the graph is
the one it wrote for the same program in the other grad mode, recorded
under this mode ("graft": true): the graph Dynamo would have written, which
does not depend on the grad mode.

The associative_scan near miss (assoc_pointwise.pb, grad enabled): torch
makes the pointwise check on its ATen re-trace, which hopctl does not have.

BaseHOP programs (torch 2.14): a small BaseHOP subclass (hop_corpus.py's,
as PyTorch's test/dynamo/test_base_hop.py defines one), whose subgraph writes
or returns its operand (the trigger) or neither (the near miss). No torch
HOP table knows it: the file's hop_classes record says it is a BaseHOP.

Mode programs (MODE_PROGRAMS): a cond whose branch writes its operand,
inside a no_grad, enable_grad or inference_mode block of the compiled
function, or compiled under inference_mode(True) and (False): the file
records the caller's mode (grad_enabled, inference_mode), the graph the
block (torch._C._set_grad_enabled, _enter/_exit_inference_mode calls).

    scripts/torch.sh 2.14 -- env PYTHONPATH=python python3 python/tools/hop_corpus_dynamo.py testdata/hops_real/dynamo [PROGRAM...]
    scripts/torch.sh 2.6 -- env PYTHONPATH=python python3 python/tools/hop_corpus_dynamo.py testdata/hops_real/torch2.6/dynamo

With PROGRAM names, only those programs (and their _grad/_nograd forms)
are compiled and written; the other verdicts are kept from OUTDIR's
verdicts.json.

pkg/analyze/passes/alias/hopcorpus_test.go (TestRealHOPCorpusDynamoGradMode)
requires hopctl's findings on every graph to be torch's verdict.
"""

import importlib
import json
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch
sys.path.insert(0, HERE)

from hop_corpus import corpus_base_hop, exception_chain  # noqa: E402

import torch._higher_order_ops.associative_scan  # noqa: E402,F401


def _version():
    return tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


def assoc_pointwise(x):
    from torch._higher_order_ops.associative_scan import associative_scan
    return associative_scan(lambda a, b: a * b + torch.sin(a), x, dim=0)


def _while(c, b, carried):
    from torch._higher_order_ops.while_loop import while_loop
    return while_loop(c, b, carried)


def cond_mutate(x):  # the branch writes its operand
    def t(x):
        x.add_(1)
        return x.sin()
    return torch.cond(x.sum() > 0, t, lambda x: x.cos(), (x,))


def cond_alias(x):  # the branch returns its operand
    return torch.cond(x.sum() > 0, lambda x: x, lambda x: x.cos(), (x,))


def cond_clean(x):
    return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))


def while_mutate(x):  # body_fn writes a carried input
    def body(i, x):
        x.add_(1)
        return i + 1, x.sin()
    return _while(lambda i, x: i < 3, body, (torch.tensor(0), x))


def while_mutate_add(x):  # body_fn writes a captured tensor (an additional input)
    y = x.clone()

    def body(i, x):
        y.add_(1)
        return i + 1, x.sin()
    return _while(lambda i, x: i < 3, body, (torch.tensor(0), x)), y


def scan_mutate_add(x):  # combine_fn writes a captured tensor (an additional input)
    from torch._higher_order_ops.scan import scan
    y = x[0].clone()

    def comb(c, z):
        y.add_(1)
        return c + z, (c + z).clone()
    return scan(comb, x[0].clone(), x), y


def map_mutate_xs(x):  # f writes its slice of xs
    from torch._higher_order_ops.map import map as user_map

    def body(a):
        a.add_(1)
        return a.sin()
    return user_map(body, x.clone())


def map_mutate(x):  # f writes a pos_arg
    from torch._higher_order_ops.map import map as user_map
    y = x[0].clone()

    def body(a, y):
        y.add_(a)
        return a.sin()
    return user_map(body, x, y)


def while_clean(x):
    return _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin()), (torch.tensor(0), x))


def while_cond_long(x):  # cond_fn returns an int64 tensor
    return _while(lambda i, x: (i < 3).long(), lambda i, x: (i + 1, x.sin()), (torch.tensor(0), x))


# (name, PyTorch test mirrored, function, input shape)
GRAD_PROGRAMS = [
    ("while_clean", "test_while_loop_simple_functionalize_check_graph (torch.compile)", while_clean, (3,)),
    ("cond_mutate", "test_cond_functionalized_input_mutation_on_true_branch (torch.compile)", cond_mutate, (3, 4)),
    ("cond_alias", "test_cond_functionalized_input_aliasing_with_aot_func (torch.compile)", cond_alias, (3, 4)),
    ("cond_clean", "test_cond_functionalized (torch.compile)", cond_clean, (3, 4)),
    ("while_mutate", "test_while_loop_functionalize (torch.compile): carried input written", while_mutate, (3,)),
    ("while_mutate_add", "test_while_loop_functionalize (torch.compile): additional input written", while_mutate_add, (3,)),
    ("scan_mutate_add", "test_scan_input_mutation (torch.compile): additional input written", scan_mutate_add, (5, 4)),
    ("map_mutate_xs", "test_map_functionalized_arg_mutation (torch.compile): xs written", map_mutate_xs, (3, 2)),
    ("map_mutate", "test_map_functionalized_arg_mutation (torch.compile): pos_arg written", map_mutate, (3, 2)),
]

def while_meta(x):  # body_fn returns a float64 carry for a float32 one
    return _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.double()), (torch.tensor(0), x))


def while_count(x):  # body_fn returns three values for two carries
    return _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin(), x.cos()), (torch.tensor(0), x))


def _mutating_branch(x):
    x.add_(1)
    return x.sin()


def region_nograd(x):  # the cond that writes its operand runs in a no_grad block
    with torch.no_grad():
        y = torch.cond(x.sum() > 0, _mutating_branch, lambda x: x.cos(), (x,))
    return y + 1


def region_enable_grad(x):  # ... in an enable_grad block
    with torch.enable_grad():
        y = torch.cond(x.sum() > 0, _mutating_branch, lambda x: x.cos(), (x,))
    return y + 1


def region_inference(x):  # ... in an inference_mode block
    with torch.inference_mode():
        y = torch.cond(x.sum() > 0, _mutating_branch, lambda x: x.cos(), (x,))
    return y + 1


def cond_mutate_view(x):  # the branch writes its operand through a view
    def t(x):
        v = x.view(x.shape)
        v.add_(1)
        return v.sin()
    return torch.cond(x.sum() > 0, t, lambda x: x.cos(), (x,))


# Programs that change the grad mode inside the compiled function (Dynamo
# writes torch._C._set_grad_enabled and _enter/_exit_inference_mode calls
# around the block), or run under inference_mode(True/False): compiled in
# the modes listed, the graph recording the caller's mode. Where Dynamo
# refuses one, the graph is the one it writes with its HOP mutation check
# (check_aliasing_and_input_mutation) switched off ("graft").
MODE_PROGRAMS = [
    ("region_nograd", "test_cond_input_mutation (a no_grad block inside torch.compile)", region_nograd, (3, 4),
     ("grad",)),
    ("region_enable_grad", "test_cond_input_mutation (an enable_grad block inside torch.compile)", region_enable_grad,
     (3, 4), ("nograd",)),
    ("region_inference", "test_cond_input_mutation (an inference_mode block inside torch.compile)", region_inference,
     (3, 4), ("grad",)),
    ("cond_mutate_view", "test_cond_functionalized_input_mutation_on_true_branch: inference_mode(True) vs (False)",
     cond_mutate_view, (3, 4), ("inference", "noinference")),
]

# Dynamo refuses these for the metadata of their carries, in its own names
# and order (check_meta_consistency_vt: body_fn_output vs carried_inputs,
# initial_xs vs combine_fn_output). The graph is the one Dynamo writes with
# that check and the HOP's own (while_loop.py's check_meta_consistency, run
# on fake tensors) switched off ("graft": the graph it would have written); the
# verdict is torch.compile's refusal of the program. torch 2.14 only: 2.6's
# Dynamo words these differently.
META_PROGRAMS = [
    ("while_meta", "test_while_loop_simple_functionalize_check_graph (torch.compile; body_fn changes a carry's dtype)",
     while_meta, (3,)),
    ("while_count", "test_while_loop_simple_functionalize_check_graph (torch.compile; three values for two carries)",
     while_count, (3,)),
]

# Dynamo refuses these for their structure, with no way to switch its check
# off: the verdict only (grad enabled). The Go test makes the graph from
# while_clean_grad.pb, as PyTorch's test does from a clean program.
VERDICT_PROGRAMS = [
    ("while_cond_long", "test_while_loop_cond_fn_returns_non_bool (torch.compile)", while_cond_long, (3,)),
]

def cond_count(x):  # the branches return two and one values
    return torch.cond(x.sum() > 0, lambda x: (x.sin(), x.cos()), lambda x: (x.cos(),), (x,))


# Dynamo refuses these for their structure; the graph is the one it writes
# with its check and the HOP's own fake-tensor check switched off ("graft",
# see _graft_cond_structure), grad enabled. torch 2.14 only.
STRUCTURE_PROGRAMS = [
    ("cond_count", "test_cond_branches_return_different_number_of_outputs (torch.compile)", cond_count, (3, 4)),
]


def basehop_mutate(x):  # the subgraph writes its operand
    def body(x):
        x.add_(1)
        return x.sin()
    return corpus_base_hop(body, x, scheme="nf4")


def basehop_alias(x):  # the subgraph returns its operand
    return corpus_base_hop(lambda x: x, x, scheme="nf4")


def basehop_clean(x):
    return corpus_base_hop(lambda x: x.sin(), x, scheme="nf4")


# BaseHOP programs, compiled in both grad modes (Dynamo's BaseHOPVariable
# relaxes nothing under no_grad). Where Dynamo refuses one, the graph is
# the one it writes with BaseHOPVariable.supports_input_mutation and
# supports_aliasing set, as test_base_hop.py does ("graft"). torch 2.14 only.
BASEHOP_PROGRAMS = [
    ("basehop_mutate", "test_schema_gen_single_return_with_mutation (without its patch)", basehop_mutate, (3, 3)),
    ("basehop_alias", "test_base_hop.py's InvokeQuantTest, subgraph returning its operand", basehop_alias, (3, 3)),
    ("basehop_clean", "test_dynamo", basehop_clean, (3, 3)),
]

# torch 2.6's scan has another call form (dim, reverse), which its Dynamo
# graphs carry: not in 2.6's corpus.
NEW_ONLY = {"scan_mutate_add"}

_RULE = re.compile(r"(Encountered (input mutation|aliasing) during higher order op tracing|.*might be .*|torch\.\w+: \w+ mutates .*"
                   r"|Expected \w+ and \w+ to have same .*"
                   r"|Explanation: (Expected cond_fn to return .*|Expected branches to return the same pytree structure\.))")


def _err(e):
    """The exception's type and the line of the rule that refused it."""
    chain = exception_chain(e)
    for x in chain:
        lines = str(x).splitlines()
        for k, line in enumerate(lines):
            line = re.sub(r"^\w+(Error|Exception): ", "", line.strip()).strip()
            m = _RULE.fullmatch(line)
            if m and m.group(3):  # Dynamo's explanation line
                line = m.group(3)
            if m:
                if line.endswith(":"):  # a metadata message: its pair[i] lines follow
                    line = "\n".join([line] + [ln.strip() for ln in lines[k + 1:] if ln.strip().startswith("pair[")])
                return {"type": type(chain[0]).__name__, "message": line}
    text = str(chain[-1]).strip()
    return {"type": type(chain[0]).__name__, "message": text.splitlines()[0] if text else ""}


def _mode(grad):
    """The context of a grad mode: True/"grad" (enable_grad), False/"nograd"
    (no_grad), "inference" (inference_mode(True)), "noinference"
    (inference_mode(False), which enables grad)."""
    if grad == "inference":
        return torch.inference_mode(True)
    if grad == "noinference":
        return torch.inference_mode(False)
    return torch.enable_grad() if grad in (True, "grad") else torch.no_grad()


def _capture(fn, x, grad, keep=False):
    """The graph Dynamo hands its backend, or None where it refuses (keep:
    the graph even when running it fails, as a graft's may)."""
    got = []

    def backend(gm, _inputs):
        got.append(gm)
        return gm.forward
    torch._dynamo.reset()
    try:
        with _mode(grad):
            torch.compile(fn, backend=backend, fullgraph=True)(x.clone())
    except Exception:
        if not (keep and got):
            return None
    if len(got) != 1:
        raise SystemExit("Dynamo wrote %d graphs" % len(got))
    return got[0]


def _verdict(fn, x, grad, backend="aot_eager"):
    """What torch.compile(backend=...) says of the program: "ok" or the
    refusal (backend "eager": what Dynamo itself says)."""
    torch._dynamo.reset()
    try:
        with _mode(grad):
            torch.compile(fn, backend=backend, fullgraph=True)(x.clone())
        return "ok"
    except Exception as e:
        out = _err(e)
        out["message"] = re.sub(r" at 0x[0-9a-f]+", "", out["message"])
        return out


def _graft_cond_structure(fn, x):
    """The graph Dynamo writes for fn with its comparison of cond's branch
    output pytrees (CondHigherOrderVariable) and cond's fake-tensor check
    (cond_fake_tensor_mode: the true branch's outputs stand for both)
    switched off."""
    import torch.utils._pytree as pytree
    import torch._dynamo.variables.higher_order_ops as dyn_hops
    from torch._subclasses.fake_tensor import FakeTensorMode
    cond_op = torch.ops.higher_order.cond
    saved = dyn_hops._make_inlined, cond_op.python_key_table[FakeTensorMode]

    def make_inlined(tx, f):
        if f is pytree.TreeSpec.__eq__:
            return lambda *_: dyn_hops.ConstantVariable.create(True)
        return saved[0](tx, f)

    def fake(mode, pred, true_fn, false_fn, operands):
        with mode:
            return true_fn(*operands)
    dyn_hops._make_inlined, cond_op.python_key_table[FakeTensorMode] = make_inlined, fake
    cond_op._dispatch_cache.clear()
    try:
        return _capture(fn, x, True, keep=True)
    finally:
        dyn_hops._make_inlined, cond_op.python_key_table[FakeTensorMode] = saved
        cond_op._dispatch_cache.clear()


def _graft_mutation(fn, x, mode):
    """The graph Dynamo writes for fn with its HOP input-mutation and
    aliasing check (check_aliasing_and_input_mutation) switched off."""
    from unittest import mock
    with mock.patch("torch._dynamo.variables.higher_order_ops.check_aliasing_and_input_mutation", lambda *a, **k: None):
        return _capture(fn, x, mode)


def _graft_basehop(fn, x, grad):
    """The graph Dynamo writes for a BaseHOP program with its mutation and
    aliasing checks switched off (test_base_hop.py's patch)."""
    from unittest import mock
    var = "torch._dynamo.variables.higher_order_ops.BaseHOPVariable."
    with mock.patch(var + "supports_input_mutation", True), mock.patch(var + "supports_aliasing", True):
        return _capture(fn, x, grad)


def build(out, only=()):
    import hopctl_torch
    os.makedirs(out, exist_ok=True)
    only = set(only)

    def wanted(name):
        return not only or name in only
    verdicts = {"torch_version": torch.__version__.split("+")[0], "programs": {}}
    if only:
        with open(os.path.join(out, "verdicts.json")) as f:
            kept = json.load(f)["programs"]
        verdicts["programs"] = {k: v for k, v in kept.items()
                                if k not in only and re.sub(r"_(grad|nograd|inference|noinference)$", "", k) not in only}
    if _version() >= (2, 14) and wanted("assoc_pointwise"):
        torch._dynamo.reset()
        gm = _capture(assoc_pointwise, torch.randn(5, 4), True)
        hopctl_torch.export(gm, os.path.join(out, "assoc_pointwise.pb"), grad_enabled=True)
    for name, test, fn, shape in GRAD_PROGRAMS:
        if name in NEW_ONLY and _version() < (2, 14) or not wanted(name):
            continue
        torch.manual_seed(0)
        x = torch.randn(*shape)
        graphs = {mode: _capture(fn, x, mode == "grad") for mode in ("grad", "nograd")}
        for mode, other in (("grad", "nograd"), ("nograd", "grad")):
            v = {"pytorch_test": test, "compile": _verdict(fn, x, mode == "grad")}
            gm = graphs[mode]
            if gm is None:
                gm = graphs[other]
                v["graft"] = True
                v["dynamo"] = _verdict(fn, x, mode == "grad", backend="eager")
            if gm is not None:
                hopctl_torch.export(gm, os.path.join(out, "%s_%s.pb" % (name, mode)), grad_enabled=(mode == "grad"))
            verdicts["programs"]["%s_%s" % (name, mode)] = v
    for name, test, fn, shape, modes in MODE_PROGRAMS:
        if not wanted(name):
            continue
        for mode in modes:
            torch.manual_seed(0)
            x = torch.randn(*shape)
            v = {"pytorch_test": test, "compile": _verdict(fn, x, mode)}
            gm = _capture(fn, x, mode)
            if gm is None:
                v["graft"] = True
                gm = _graft_mutation(fn, x, mode)
            if gm is not None:
                with _mode(mode):
                    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
                hopctl_torch.export(gm, os.path.join(out, "%s_%s.pb" % (name, mode)), grad_enabled=grad,
                                    inference_mode=inference)
            verdicts["programs"]["%s_%s" % (name, mode)] = v
    if _version() >= (2, 14):
        for name, test, fn, shape in STRUCTURE_PROGRAMS:
            if not wanted(name):
                continue
            torch.manual_seed(0)
            x = torch.randn(*shape)
            v = {"pytorch_test": test, "compile": _verdict(fn, x, True), "graft": True}
            gm = _graft_cond_structure(fn, x)
            if gm is not None:
                hopctl_torch.export(gm, os.path.join(out, name + ".pb"), grad_enabled=True)
            verdicts["programs"][name] = v
        for name, test, fn, shape in BASEHOP_PROGRAMS:
            if not wanted(name):
                continue
            torch.manual_seed(0)
            x = torch.randn(*shape)
            for mode in ("grad", "nograd"):
                v = {"pytorch_test": test, "compile": _verdict(fn, x, mode == "grad")}
                gm = _capture(fn, x, mode == "grad")
                if gm is None:
                    v["graft"] = True
                    gm = _graft_basehop(fn, x, mode == "grad")
                if gm is not None:
                    hopctl_torch.export(gm, os.path.join(out, "%s_%s.pb" % (name, mode)), grad_enabled=(mode == "grad"))
                verdicts["programs"]["%s_%s" % (name, mode)] = v
        for name, test, fn, shape in VERDICT_PROGRAMS:
            if not wanted(name):
                continue
            torch.manual_seed(0)
            verdicts["programs"][name] = {"pytorch_test": test, "compile": _verdict(fn, torch.randn(*shape), True)}
        import torch._dynamo.variables.higher_order_ops as dyn_hops
        while_mod = importlib.import_module("torch._higher_order_ops.while_loop")
        for name, test, fn, shape in META_PROGRAMS:
            if not wanted(name):
                continue
            torch.manual_seed(0)
            x = torch.randn(*shape)
            v = {"pytorch_test": test, "compile": _verdict(fn, x, True), "graft": True}
            saved = dyn_hops.check_meta_consistency_vt, while_mod.check_meta_consistency
            dyn_hops.check_meta_consistency_vt = while_mod.check_meta_consistency = lambda *a, **k: None
            try:
                gm = _capture(fn, x, True)
            finally:
                dyn_hops.check_meta_consistency_vt, while_mod.check_meta_consistency = saved
            if gm is not None:
                hopctl_torch.export(gm, os.path.join(out, name + ".pb"), grad_enabled=True)
            verdicts["programs"][name] = v
    with open(os.path.join(out, "verdicts.json"), "w") as f:
        json.dump(verdicts, f, indent=1, sort_keys=True)
        f.write("\n")
    for name, v in sorted(verdicts["programs"].items()):
        print("%-26s %s" % (name, v["compile"]))


def main(argv):
    build(argv[1], argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
