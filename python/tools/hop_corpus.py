#!/usr/bin/env python3
"""The real-trace HOP corpus: PyTorch's control-flow programs, traced by torch 2.x.

Each program mirrors a test of PyTorch's test/functorch/test_control_flow.py
(named in PROGRAMS) and comes as a trigger of a rule and a near miss. For
every program this writes

* OUTDIR/<name>.pb: make_fx(f, tracing_mode="fake") of the program, the graph
  as written, mutations included (exported with hopctl_torch);
* an entry of OUTDIR/verdicts.json with torch's verdicts:
  - "subgraphs": for every HOP subgraph of that trace, the four results of
    torch's own check_input_alias_and_mutation_return_outputs
    (torch/_higher_order_ops/utils.py), mutated_inputs as torch lists them
    (one entry per write);
  - "functionalize": what tracing the program through functionalization
    (make_fx(torch.func.functionalize(f))) says, where the HOPs'
    functionalization rules call _check_alias_and_mutation: "ok", or the
    exception's type and message;
  - "grad_mode": whether the trace ran with grad enabled.

Run inside a torch 2.x chroot, from the repository root:

    scripts/torch.sh 2.14 -- env PYTHONPATH=python python3 python/tools/hop_corpus.py testdata/hops_real

python/tests/test_hop_corpus.py re-traces every program in the running torch
and compares; pkg/analyze/hopcorpus_test.go compares hopctl with the verdicts.
"""

import argparse
import re
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch


# Importing it registers torch.ops.higher_order.associative_scan, which the
# programs below call directly: the verdicts must not depend on which
# programs ran before.
import torch._higher_order_ops.associative_scan  # noqa: E402,F401


def _cond(pred, t, f, ops):
    return torch.cond(pred, t, f, ops)


# while_loop, scan and map are called as the HOP operators themselves, as
# PyTorch's make_fx tests do: their user-facing wrappers compile the call
# with Dynamo in eager mode, so a program Dynamo refuses never reaches the
# make_fx-level checks (and gives no graph to compare).

def _while(c, b, carried):
    return torch.ops.higher_order.while_loop(c, b, tuple(carried), ())


def _hscan(fn, init, xs, additional):
    """The scan HOP in this torch's call form: torch 2.6's also takes dim and
    reverse (scan(combine_fn, init, xs, dim, reverse, additional_inputs))."""
    if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 14):
        return torch.ops.higher_order.scan(fn, init, xs, 0, False, additional)
    return torch.ops.higher_order.scan(fn, init, xs, additional)


def _scan(fn, init, xs):
    return _hscan(fn, [init], [xs], [])


def _map(fn, xs, *args):
    return torch.ops.higher_order.map_impl(fn, [xs], list(args))


def _assoc(fn, xs):
    from torch._higher_order_ops.associative_scan import associative_scan
    return associative_scan(fn, xs, dim=0, combine_mode="generic")


# Each program: (name, PyTorch test it mirrors, function, input builder).
# Triggers break a rule; near misses are the closest program that does not.

def p_cond_clean(x):
    return _cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))


def p_cond_mutate(x):  # test_cond_functionalized_input_mutation
    def t(x):
        x.add_(1)
        return x.sin()
    return _cond(x.sum() > 0, t, lambda x: x.cos(), (x,))


def p_cond_mutate_view(x):  # trigger through a view
    def t(x):
        x.view(-1).mul_(2)
        return x.cos()
    return _cond(x.sum() > 0, t, lambda x: x.sin(), (x,))


def p_cond_mutate_clone(x):  # near miss: the branch writes a clone
    def t(x):
        y = x.clone()
        y.add_(1)
        return y.sin()
    return _cond(x.sum() > 0, t, lambda x: x.cos(), (x,))


def p_cond_set(x, y):  # set_ writes its self argument
    def t(x, y):
        z = x.clone()
        z.set_(y)
        x.set_(y)
        return z.sin()
    # torch.cond compiles with Dynamo, which cannot trace set_: the HOP itself
    return torch.ops.higher_order.cond(x.sum() > 0, t, lambda x, y: x.cos(), (x, y))


def p_cond_alias(x):  # test_cond_functionalized_input_aliasing_with_aot_func
    return _cond(x.sum() > 0, lambda x: x, lambda x: x.cos(), (x,))


def p_cond_alias_view(x):
    return _cond(x.sum() > 0, lambda x: x.view(-1), lambda x: x.cos().view(-1), (x,))


def p_cond_out_out_alias(x):  # two outputs share storage
    def t(x):
        y = x.sin()
        return y, y.view(-1)
    return _cond(x.sum() > 0, t, lambda x: (x.cos(), x.sin().view(-1)), (x,))


def p_cond_no_alias_clone(x):  # near miss: returns a clone
    return _cond(x.sum() > 0, lambda x: x.clone(), lambda x: x.cos(), (x,))


def p_cond_mutate_twice(x):  # mutated_inputs lists one index per write
    def t(x):
        x.sin_().add_(2)
        return x.cos()
    return _cond(x.sum() > 0, t, lambda x: x.sin(), (x,))


def p_while_clean(it, x):  # test_while_loop_simple_functionalize_check_graph
    return _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin()), (it, x))


def p_while_mutate(it, x):  # test_while_loop_functionalize: body mutates
    def body(i, x):
        x.add_(1)
        return i + 1, x.sin()
    return _while(lambda i, x: i < 3, body, (it, x))


def p_while_alias(it, x):
    return _while(lambda i, x: i < 3, lambda i, x: (i + 1, x), (it, x))


def p_while_cond_mutate(it, x):
    def c(i, x):
        x.add_(1)
        return i < 3
    return _while(c, lambda i, x: (i + 1, x.cos()), (it, x))


def p_scan_clean(init, xs):  # test_scan_simple
    def comb(c, x):
        n = c + x
        return n, n.clone()
    return _scan(comb, init, xs)


def p_scan_mutate(init, xs):
    def comb(c, x):
        x.mul_(2)
        n = c + x
        return n, n.clone()
    return _scan(comb, init, xs)


def p_scan_alias(init, xs):  # ys aliases the carry
    def comb(c, x):
        n = c + x
        return n, n
    return _scan(comb, init, xs)


def p_scan_alias_xs(init, xs):
    def comb(c, x):
        return c + x, x.view(-1)
    return _scan(comb, init, xs)


def p_map_clean(xs, y):  # test_map_functionalized
    return _map(lambda x, y: x * y + 1, xs, y)


def p_map_mutate(xs, y):  # test_map_functionalized_arg_mutation
    def body(x, y):
        y.add_(x)
        return x.sin()
    return _map(body, xs, y)


def p_map_alias(xs, y):  # test_map_functionalized_elem_alias
    return _map(lambda x, y: x.view(x.shape), xs, y)


def p_assoc_clean(xs):  # test_associative_scan_compile
    return _assoc(lambda a, b: a + b, xs)


def p_assoc_alias(xs):
    return _assoc(lambda a, b: a, xs)


def p_nested_mutate(x, it):  # cond → while_loop, the body writes a cond operand
    def t(x, it):
        def body(i, y):
            x.mul_(2)
            return i + 1, y.sin()
        return _while(lambda i, y: i < 2, body, (it, x.clone()))[1]
    return _cond(x.sum() > 0, t, lambda x, it: x.cos(), (x, it))


def p_nested_clean(x, it):
    def t(x, it):
        return _while(lambda i, y: i < 2, lambda i, y: (i + 1, y.sin() + x), (it, x.clone()))[1]
    return _cond(x.sum() > 0, t, lambda x, it: x.cos(), (x, it))


# The structural programs call the cond HOP itself: torch.cond compiles with
# Dynamo, which refuses them with Dynamo's words before make_fx's checks run.

def p_cond_count(x):  # trace_cond: branches return different numbers of outputs
    return torch.ops.higher_order.cond(x.sum() > 0, lambda x: (x.sin(), x.cos()), lambda x: (x.cos(),), (x,))


def p_cond_dtype(x):  # _merge_output: outputs of different dtypes
    return torch.ops.higher_order.cond(x.sum() > 0, lambda x: (x.sin(),), lambda x: ((x > 0).long(),), (x,))


def p_cond_size(x):  # near miss: different sizes are merged into an unbacked SymInt
    return torch.ops.higher_order.cond(x.sum() > 0, lambda x: (x[:2].sin(),), lambda x: (x.cos(),), (x,))


def p_while_cond_long(it, x):  # _validate_cond_output: cond_fn returns an int64 tensor
    from torch._higher_order_ops.while_loop import while_loop
    return while_loop(lambda i, x: (i < 3).long(), lambda i, x: (i + 1, x.sin()), (it, x))


def p_while_count(it, x):  # check_meta_consistency (2.14): body_fn returns three values for two carries
    return _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin(), x.cos()), (it, x))


def p_while_meta(it, x):  # body_fn returns a float64 carry for a float32 one
    return _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.double()), (it, x))


def p_scan_inits_same_slice(x, xs):  # two inits that are the same slice of one tensor share its storage
    return _hscan(lambda c, d, y: (c + y, d * y, y.sin()), [x[0], x[0]], [xs], [])


def p_scan_zero_len(init, xs):  # scan(): a zero-length scan dimension (2.14 accepts it, 2.6 refuses it)
    from torch._higher_order_ops.scan import scan
    return scan(lambda c, x: (c + x, c.clone()), init, xs)


def p_scan_count(init, xs):  # check_meta_consistency in trace_scan: two inits, one carry returned
    return _hscan(lambda c, d, x: (c + x,), [init, init.clone()], [xs], [])


def p_scan_count_ok(init, xs):  # near miss: two inits, two carries and one output
    return _hscan(lambda c, d, x: (c + x, d * x, x.sin()), [init, init.clone()], [xs], [])


def p_scan_carry_dtype(init, xs):  # trace_scan (2.6) / check_meta_consistency (2.14): a float64 carry for a float32 init
    return _hscan(lambda c, x: ((c + x).double(), x.sin()), [init], [xs], [])


def p_scan_carry_stride(init, xs):  # near miss in 2.6 (shape, dtype, device agree; 2.6 compares no stride), trigger in 2.14
    return _hscan(lambda c, x: ((c + x).t(), x.sin()), [init], [xs], [])


def p_scan_xs_len(init, xs, ys):  # scan(): xs leaves with 5 and 6 rows
    from torch._higher_order_ops.scan import scan
    return scan(lambda c, x: (c + x[0] * x[1], c.clone()), init, (xs, ys))


def p_scan_xs_len_ok(init, xs, ys):  # near miss: both with 5 rows
    from torch._higher_order_ops.scan import scan
    return scan(lambda c, x: (c + x[0] * x[1], c.clone()), init, (xs, ys))


def p_assoc_count(xs):  # trace_associative_scan: combine_fn returns two results for one xs
    return torch.ops.higher_order.associative_scan(lambda a, b: (a + b, a * b), [xs], ())


def _uassoc(fn, xs):
    from torch._higher_order_ops.associative_scan import associative_scan
    return associative_scan(fn, xs, dim=0)  # combine_mode="pointwise", compiled by Dynamo


def p_assoc_sparse(xs):  # associative_scan()'s _validate_input: sparse xs (no graph: the HOP cannot slice them)
    return _assoc(lambda a, b: a + b, xs)


def p_assoc_pointwise(xs):  # Dynamo's check: combine_fn with a matmul
    return _uassoc(lambda a, b: a @ b, xs)


def p_assoc_pointwise_ok(xs):  # near miss: pointwise ops only
    return _uassoc(lambda a, b: (a * b).sin() + a, xs)


def p_assoc_pointwise_view(xs):  # is_pointwise_use: a view that is returned is no pointwise use
    return _uassoc(lambda a, b: (a * b).view(-1).view(4, 4), xs)


def p_assoc_pointwise_view_ok(xs):  # near miss: views used by pointwise ops
    return _uassoc(lambda a, b: a.t().t() * b, xs)


def _umap(fn, xs):
    from torch._higher_order_ops.map import map as user_map
    return user_map(fn, xs)


def p_map_lead(x, y):  # map(): xs with leading dimensions 3 and 4
    return _umap(lambda xs: xs[0] + xs[1], [x, y])


def p_map_lead_ok(x, y):  # near miss: both leading dimensions 3
    return _umap(lambda xs: xs[0] + xs[1], [x, y])


def p_map_zero(x):  # map(): a zero leading dimension
    return _umap(lambda a: a.sin(), x)


def p_map_out_int(x):  # f returns an int beside a tensor
    return _umap(lambda a: (a.sin(), 3), x)


def p_map_out_none(x):  # near miss: None outputs are accepted
    return _umap(lambda a: (a.sin(), None), x)


# Grafts: PyTorch refuses the program, so there is no trace of it. The graph
# torch would have written is the trace of the nearest program it accepts
# (GRAFT_BASE) with one subgraph replaced by the make_fx trace of the
# refused program's function; torch's refusal of the real program is the
# verdict.
GRAFT_BASE = {
    "cond_count": (lambda x: torch.ops.higher_order.cond(x.sum() > 0, lambda x: (x.sin(), x.cos()),
                                                         lambda x: (x.cos(), x.sin()), (x,)),
                   "false_graph_0", lambda x: (x.cos(),)),
    "cond_dtype": (lambda x: torch.ops.higher_order.cond(x.sum() > 0, lambda x: (x.sin(),), lambda x: (x.cos(),), (x,)),
                   "false_graph_0", lambda x: ((x > 0).long(),)),
    "while_cond_long": (lambda it, x: _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin()), (it, x)),
                        "while_loop_cond_graph_0", lambda i, x: (i < 3).long()),
    "while_count": (lambda it, x: _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin()), (it, x)),
                    "while_loop_body_graph_0", lambda i, x: (i + 1, x.sin(), x.cos())),
    "while_meta": (lambda it, x: _while(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin()), (it, x)),
                   "while_loop_body_graph_0", lambda i, x: (i + 1, x.double())),
    "scan_count": (lambda init, xs: _hscan(lambda c, d, x: (c + x, d + x), [init, init.clone()], [xs], []),
                   "scan_combine_graph_0", lambda c, d, x: (c + x,)),
    "scan_carry_dtype": (lambda init, xs: _hscan(lambda c, x: (c + x, x.sin()), [init], [xs], []),
                         "scan_combine_graph_0", lambda c, x: ((c + x).double(), x.sin())),
    "scan_carry_stride": (lambda init, xs: _hscan(lambda c, x: (c + x, x.sin()), [init], [xs], []),
                          "scan_combine_graph_0", lambda c, x: ((c + x).t(), x.sin())),
    "assoc_count": (lambda xs: torch.ops.higher_order.associative_scan(lambda a, b: (a + b,), [xs], ()),
                    "associative_scan_combine_graph_0", lambda a, b: (a + b, a * b)),
    "assoc_pointwise": (lambda xs: torch.ops.higher_order.associative_scan(lambda a, b: (a * b,), [xs], ()),
                        "associative_scan_combine_graph_0", lambda a, b: (a @ b,)),
    "assoc_pointwise_view": (lambda xs: torch.ops.higher_order.associative_scan(lambda a, b: (a * b,), [xs], ()),
                             "associative_scan_combine_graph_0", lambda a, b: ((a * b).view(-1).view(4, 4),)),
    # map's own checks run in map() before the HOP: the HOP, called
    # directly, writes the graph (attribute None: nothing replaced).
    "map_lead": (lambda x, y: torch.ops.higher_order.map_impl(lambda a, b: a + b, [x, y], []), None, None),
    "scan_xs_len": (lambda init, xs, ys: _hscan(lambda c, x, y: (c + x * y, c.clone()), [init], [xs, ys], []),
                    None, None),
    "scan_zero_len": (lambda init, xs: _hscan(lambda c, x: (c + x, c.clone()), [init], [xs], []), None, None),
    "map_zero": (lambda x: torch.ops.higher_order.map_impl(lambda a: a.sin(), [x], []), None, None),
    "map_out_int": (lambda x: torch.ops.higher_order.map_impl(lambda a: (a.sin(), 3), [x], []), None, None),
}


def _graft(name, inputs):
    from torch.fx.experimental.proxy_tensor import make_fx
    base, attr, sub = GRAFT_BASE[name]
    gm = make_fx(base, tracing_mode="fake")(*[x.clone() for x in inputs])
    if attr is None:
        return gm
    old = getattr(gm, attr)
    sub_inputs = [n.meta["val"] for n in old.graph.nodes if n.op == "placeholder"]
    sub_inputs = [torch.empty_strided(v.shape, v.stride(), dtype=v.dtype) for v in sub_inputs]
    setattr(gm, attr, make_fx(sub, tracing_mode="fake")(*sub_inputs))
    gm.recompile()
    return gm


def _f(*s):
    return torch.randn(*s)


PROGRAMS = [
    ("cond_clean", "test_cond_functionalized", p_cond_clean, lambda: [_f(3, 4)]),
    ("cond_mutate", "test_cond_functionalized_input_mutation_on_true_branch", p_cond_mutate, lambda: [_f(3, 4)]),
    ("cond_mutate_view", "test_cond_functionalized_input_mutation_on_true_branch", p_cond_mutate_view, lambda: [_f(3, 4)]),
    ("cond_mutate_clone", "test_cond_functionalized (near miss)", p_cond_mutate_clone, lambda: [_f(3, 4)]),
    ("cond_mutate_twice", "test_cond_functionalized_input_mutation_on_true_branch", p_cond_mutate_twice, lambda: [_f(3, 4)]),
    ("cond_set", "test_cond_functionalized_input_mutation_on_true_branch (set_)", p_cond_set,
     lambda: [_f(3, 4), _f(3, 4)]),
    ("cond_alias", "test_cond_functionalized_input_aliasing_with_aot_func", p_cond_alias, lambda: [_f(3, 4)]),
    ("cond_alias_view", "test_cond_functionalized_input_aliasing_with_aot_func", p_cond_alias_view, lambda: [_f(3, 4)]),
    ("cond_out_out_alias", "test_cond_functionalized_aliasing", p_cond_out_out_alias, lambda: [_f(3, 4)]),
    ("cond_no_alias_clone", "test_cond_functionalized (near miss)", p_cond_no_alias_clone, lambda: [_f(3, 4)]),
    ("while_clean", "test_while_loop_simple_functionalize_check_graph", p_while_clean,
     lambda: [torch.tensor(0), _f(3)]),
    ("while_mutate", "test_while_loop_functionalize", p_while_mutate, lambda: [torch.tensor(0), _f(3)]),
    ("while_alias", "test_while_loop_functionalize", p_while_alias, lambda: [torch.tensor(0), _f(3)]),
    ("while_cond_mutate", "test_while_loop_functionalize", p_while_cond_mutate, lambda: [torch.tensor(0), _f(3)]),
    ("scan_clean", "test_scan_simple", p_scan_clean, lambda: [_f(4), _f(5, 4)]),
    ("scan_mutate", "test_scan_input_mutation", p_scan_mutate, lambda: [_f(4), _f(5, 4)]),
    ("scan_alias", "test_scan_input_output_alias", p_scan_alias, lambda: [_f(4), _f(5, 4)]),
    ("scan_alias_xs", "test_scan_input_output_alias", p_scan_alias_xs, lambda: [_f(4), _f(5, 4)]),
    ("map_clean", "test_map_functionalized", p_map_clean, lambda: [_f(3, 2), _f(2)]),
    ("map_mutate", "test_map_functionalized_arg_mutation", p_map_mutate, lambda: [_f(3, 2), _f(2)]),
    ("map_alias", "test_map_functionalized_elem_alias", p_map_alias, lambda: [_f(3, 2), _f(2)]),
    ("assoc_clean", "test_associative_scan_compile", p_assoc_clean, lambda: [_f(5, 3)]),
    ("assoc_alias", "test_associative_scan_input_output_alias", p_assoc_alias, lambda: [_f(5, 3)]),
    ("cond_count", "test_cond_branches_return_different_number_of_outputs", p_cond_count, lambda: [_f(3, 4)]),
    ("cond_dtype", "test_cond_raise_user_error_on_branch_return_different_tensor_types", p_cond_dtype,
     lambda: [_f(3, 4)]),
    ("cond_size", "test_cond_unbacked_symint_outer_to_inner (near miss: sizes merged)", p_cond_size,
     lambda: [_f(3, 4)]),
    ("while_cond_long", "test_while_loop_cond_fn_returns_non_bool", p_while_cond_long,
     lambda: [torch.tensor(0), _f(3)]),
    ("while_count", "test_while_loop_simple_functionalize_check_graph (body_fn returns three values for two carries)",
     p_while_count, lambda: [torch.tensor(0), _f(3)]),
    ("while_meta", "test_while_loop_simple_functionalize_check_graph (body_fn changes a carry's dtype)",
     p_while_meta, lambda: [torch.tensor(0), _f(3)]),
    ("scan_inits_same_slice", "test_scan_simple (two inits that are one slice of a tensor: torch.compile's AOTAutograd refuses "
     "them, eager runs them)", p_scan_inits_same_slice, lambda: [_f(2, 4), _f(5, 4)]),
    ("scan_zero_len", "test_scan_simple (a zero-length scan dimension)", p_scan_zero_len, lambda: [_f(4), _f(0, 4)]),
    ("scan_count", "test_scan_wrong_carry (init and carry counts)", p_scan_count, lambda: [_f(4), _f(5, 4)]),
    ("scan_count_ok", "test_scan_simple (near miss: two carries, one output)", p_scan_count_ok, lambda: [_f(4), _f(5, 4)]),
    ("scan_carry_dtype", "test_scan_wrong_carry (a carry's dtype changes)", p_scan_carry_dtype, lambda: [_f(4), _f(5, 4)]),
    ("scan_carry_stride", "test_scan_wrong_carry (a carry's stride changes: 2.6 compares device, dtype and shape only)",
     p_scan_carry_stride, lambda: [_f(4, 4), _f(5, 4, 4)]),
    ("scan_xs_len", "test_scan_wrong_pytree (scan dimension sizes)", p_scan_xs_len, lambda: [_f(4), _f(5, 4), _f(6, 4)]),
    ("scan_xs_len_ok", "test_scan_simple (near miss: one scan dimension size)", p_scan_xs_len_ok,
     lambda: [_f(4), _f(5, 4), _f(5, 4)]),
    ("assoc_count", "test_associative_scan_wrong_pytree (combine_fn output count)", p_assoc_count, lambda: [_f(5, 3)]),
    ("assoc_sparse", "test_associative_scan_compile (sparse xs: associative_scan()'s input check)", p_assoc_sparse,
     lambda: [_f(5, 3).to_sparse()]),
    ("assoc_pointwise", "test_associative_scan_non_pointwise", p_assoc_pointwise, lambda: [_f(5, 4, 4)]),
    ("assoc_pointwise_ok", "test_associative_scan_compile (near miss: pointwise)", p_assoc_pointwise_ok, lambda: [_f(5, 4, 4)]),
    ("assoc_pointwise_view", "test_associative_scan_non_pointwise (a returned view)", p_assoc_pointwise_view,
     lambda: [_f(5, 4, 4)]),
    ("assoc_pointwise_view_ok", "test_associative_scan_compile (near miss: views used pointwise)", p_assoc_pointwise_view_ok,
     lambda: [_f(5, 4, 4)]),
    ("map_lead", "test_map_illegal_inputs (leading dimensions)", p_map_lead, lambda: [_f(3, 2), _f(4, 2)]),
    ("map_lead_ok", "test_map_illegal_inputs (near miss: consistent)", p_map_lead_ok, lambda: [_f(3, 2), _f(3, 2)]),
    ("map_zero", "test_map_illegal_inputs (zero leading dimension)", p_map_zero, lambda: [_f(0, 2)]),
    ("map_out_int", "test_map_illegal_outputs (non-tensor output)", p_map_out_int, lambda: [_f(3, 2)]),
    ("map_out_none", "test_map_illegal_outputs (near miss: None output)", p_map_out_none, lambda: [_f(3, 2)]),
    ("nested_mutate", "test_cond_nested_while_loop", p_nested_mutate, lambda: [_f(3), torch.tensor(0)]),
    ("nested_clean", "test_cond_nested_while_loop (near miss)", p_nested_clean, lambda: [_f(3), torch.tensor(0)]),
]


_RULE_WORDS = ("might be", "Mutations detected", "Expected", "expected same", "expected combine_fn", "must",
               "needs to be", "non torch.Tensor leaf")


def _err(e):
    out = _err_raw(e)
    out["message"] = re.sub(r" at 0x[0-9a-f]+", "", out["message"])  # object addresses change per run
    return out


def exception_chain(e):
    """e and its causes (or contexts), outermost first, each once."""
    chain, seen = [], set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.append(e)
        e = e.__cause__ or e.__context__
    return chain


def _err_raw(e):
    """The exception's type and the message of the rule that raised it: the
    first line naming a rule anywhere in its text or its chain of causes
    (Dynamo and fake tensor wrap the HOP's RuntimeError), else its first line."""
    chain = exception_chain(e)
    for x in chain:
        lines = [ln.strip() for ln in str(x).splitlines()]
        for k, line in enumerate(lines):
            if any(w in line for w in _RULE_WORDS):
                m = re.search(r"got \w+\('(.*)'\)$", line)
                if m:  # fake tensor's wrapper: "...: got RuntimeError('<message>')"
                    line = m.group(1)
                elif line.endswith(":"):  # a message that goes on (cond's output counts)
                    line = "\n".join([line] + ["  " + ln for ln in lines[k + 1:k + 3]])
                line = re.sub(r"^RuntimeError: ", "", line)  # Dynamo's wrapper names the inner type
                return {"type": type(chain[0]).__name__, "message": line}
    text = str(chain[-1]).strip()
    return {"type": type(chain[0]).__name__, "message": text.splitlines()[0] if text else ""}


def _hop_subgraphs(gm):
    """(qualified name, submodule) of every GraphModule under gm, in order."""
    return [(n, m) for n, m in gm.named_modules() if n and isinstance(m, torch.fx.GraphModule)]


def trace(name, fn, make_inputs, grad):
    """Traces one program; returns (gm or None, verdict dict)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    import torch._higher_order_ops.utils as hop_utils
    # torch 2.6 has no check_input_alias_and_mutation: its corpus records
    # the functionalization verdicts only.
    chk = getattr(hop_utils, "check_input_alias_and_mutation_return_outputs", None)

    torch.manual_seed(0)
    inputs = make_inputs()
    verdict = {"grad_mode": grad}
    ctx = torch.enable_grad() if grad else torch.no_grad()
    with ctx:
        try:
            gm = make_fx(fn, tracing_mode="fake")(*[x.clone() for x in inputs])
        except Exception as e:  # torch refuses to trace the program at all
            verdict["trace"] = _err(e)
            if name not in GRAFT_BASE:
                return None, inputs, verdict
            try:
                gm = _graft(name, inputs)
            except Exception as e2:  # this torch refuses the graft's base too: verdict only
                verdict["graft_refused"] = _err(e2)
                return None, inputs, verdict
            verdict["graft"] = True
        subs = {}
        for q, m in (_hop_subgraphs(gm) if chk is not None else []):
            ii, io, oo, mut = chk(m)[:4]
            subs[q] = {"inp_inp_alias": {str(k): v for k, v in sorted(ii.items())},
                       "inp_out_alias": {str(k): v for k, v in sorted(io.items())},
                       "out_out_alias": {str(k): v for k, v in sorted(oo.items())},
                       "mutated_inputs": list(mut)}
        if chk is not None:
            verdict["subgraphs"] = subs
        try:
            make_fx(torch.func.functionalize(fn), tracing_mode="fake")(*[x.clone() for x in inputs])
            verdict["functionalize"] = "ok"
        except Exception as e:
            verdict["functionalize"] = _err(e)
    return gm, inputs, verdict


def build(outdir, names=None, grad=False):
    import hopctl_torch
    os.makedirs(outdir, exist_ok=True)
    out = {"torch_version": torch.__version__.split("+")[0], "programs": {}}
    for name, test, fn, make_inputs in PROGRAMS:
        if names and name not in names:
            continue
        gm, inputs, verdict = trace(name, fn, make_inputs, grad)
        verdict["pytorch_test"] = test
        if gm is not None:
            hopctl_torch.export(gm, os.path.join(outdir, name + ".pb"), example_inputs=inputs)
        out["programs"][name] = verdict
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    out = build(args.outdir, args.names)
    path = os.path.join(args.outdir, "verdicts.json")
    if args.names and os.path.exists(path):  # re-made some programs: keep the others' verdicts
        with open(path) as f:
            old = json.load(f)
        if old.get("torch_version") == out["torch_version"]:
            old["programs"].update(out["programs"])
            out = old
    with open(os.path.join(args.outdir, "verdicts.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    for name, v in out["programs"].items():
        print("%-22s %s" % (name, v.get("trace") or v.get("functionalize")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
