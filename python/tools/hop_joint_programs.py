"""Programs of the real-trace HOP joint corpus that every torch 2.x can load:
while_loop (test/functorch/test_control_flow.py's WHILE_LOOP_TESTS, run by
its while_loop autograd tests) and HOP bodies with in-place ops.

python/tools/hop_joint_corpus.py traces them (torch 2.14) into
testdata/hops_real/joint; python/tests/test_hop_joint.py runs them in every
torch 2.x (2.6 cannot differentiate while_loop: hopctl must refuse as it
does). Importing this module needs nothing beyond torch.
"""

import torch


def _f(*shape):
    return torch.randn(*shape)


# while_loop: the HOP itself (the user-facing while_loop compiles with
# Dynamo); the programs of test_control_flow.py's WHILE_LOOP_TESTS
# (_while_loop_tests), which its while_loop autograd tests run. make_fx with
# grad writes while_loop_stack_output and selects of its last elements.

def _while(c, b, carried, additional=()):
    return torch.ops.higher_order.while_loop(c, b, tuple(carried), tuple(additional))


def p_while_simple(x):  # WHILE_LOOP_TESTS["simple"]
    return _while(lambda x: x.sum() < 10, lambda x: (x + 1,), (x,))


def p_while_linear(it, x, w, b):  # WHILE_LOOP_TESTS["simple_with_linear"] (the Linear's weights as additional inputs)
    return _while(lambda it, x, w, b: it - 1 > 0,
                  lambda it, x, w, b: (it - 1, torch.nn.functional.linear(x, w, b).sin()), (it, x), (w, b))


def p_while_nested(out_iter, it, y):  # WHILE_LOOP_TESTS["nested"]
    def outer_body(out_iter, it, y):
        out_iter, it, y = _while(lambda o, i, y: i.sum() < 10, lambda o, i, y: (o.clone(), i + y, y + 1),
                                 (out_iter, it, y))
        return (out_iter + 1, it, y)
    return _while(lambda o, i, y: o.sum() < 2, outer_body, (out_iter, it, y))


def p_while_nested2(ci, cj, a, b):  # WHILE_LOOP_TESTS["nested2"]: int and float carries
    def body(i1, j1, x1, y1):
        i1, j1, x1, y1 = _while(lambda i2, j2, x2, y2: j2 > 0,
                                lambda i2, j2, x2, y2: (i2.clone(), j2 - 1, x2 + 3.14, y2 - 2.71), (i1, j1, x1, y1))
        return i1 - 1, j1.clone(), x1 * 2, y1 / 2
    return _while(lambda i1, j1, x1, y1: i1 > 0, body, (ci, cj, a, b))


def p_while_mutation(x, w):  # WHILE_LOOP_TESTS["simple_with_mutation"]: in-place ops on clones in cond_fn and body_fn
    def cond(x, w):
        return x.clone().add_(1).add_(-1).sum() < 10

    def body(x, w):
        return (x.clone().add_(1).mul_(w) + 1,)
    return _while(cond, body, (x,), (w,))


def p_while_never(x, w):  # the loop is never entered
    return _while(lambda x, w: x.sum() > 1e6, lambda x, w: ((x * w).sin(),), (x,), (w,))


# In-place ops in HOP bodies (on values the body makes): AOTAutograd
# functionalizes them; hopctl's joint must have none in its bodies either.

def p_cond_inplace(x, w):  # test_cond_functionalized (an in-place op on a clone in a branch), with grad
    def t(x, w):
        y = x.clone()
        y.mul_(w)
        return y.sin()
    return torch.cond(x.sum() > 0, t, lambda x, w: x.cos() * w, (x, w))


def p_map_inplace(xs, w):  # test_map_functionalized (an in-place op on a clone in the body), with grad
    def body(x, w):
        y = x.clone()
        y.mul_(w)
        return y.sin()
    from torch._higher_order_ops.map import map as hop_map
    return hop_map(body, xs, w)


def p_scan_inplace(init, xs, w):  # test_scan_functionalized-like: in-place ops on a clone in combine_fn, with grad
    def comb(c, x, w):
        n = c.clone()
        n.mul_(x.sin())
        n.add_(w)
        return n, n.clone()
    return tuple(torch.ops.higher_order.scan(comb, [init], [xs], [w]))


# Tensor constants in HOP bodies: make_fx lifts a torch.tensor(...) made in a
# subgraph into an attribute of that subgraph (true_graph_0._tensor_constant0,
# read by a get_attr in it); the joint and its partitions must carry the
# attributes their subgraphs read, at every nesting level.

def p_cond_constant(i, x, w):  # test_cond_functionalized-like, with a tensor constant in a branch and in a while_loop body in it
    def t(i, x, w):
        def body(i, x, w):
            return i + 1, (x * w + torch.tensor([0.5, 0.25, 0.125])).sin()
        y = _while(lambda i, x, w: i < 2, body, (i, x), (w,))[1]
        return y + torch.tensor([1.0, 2.0, 3.0])
    return torch.cond(x.sum() > 0, t, lambda i, x, w: x.cos() * w, (i, x, w))


# name, PyTorch test, function, inputs, indices of the inputs requiring grad,
# tracing mode, Dynamo's inline_single_use_invoke_subgraph (None: no Dynamo).
PROGRAMS = [
    ("while_simple", "test_control_flow.py WHILE_LOOP_TESTS simple (autograd)", p_while_simple,
     lambda: [torch.zeros(1)], [0], "fake", None),
    ("while_linear", "test_control_flow.py WHILE_LOOP_TESTS simple_with_linear (autograd)", p_while_linear,
     lambda: [torch.tensor(3), _f(2, 2), _f(2, 2), _f(2)], [1, 2, 3], "fake", None),
    ("while_nested", "test_control_flow.py WHILE_LOOP_TESTS nested (autograd)", p_while_nested,
     lambda: [torch.zeros(1), torch.zeros(1), torch.zeros(1)], [0, 1, 2], "fake", None),
    ("while_nested2", "test_control_flow.py WHILE_LOOP_TESTS nested2 (autograd; int carries)", p_while_nested2,
     lambda: [torch.tensor(2), torch.tensor(2), torch.ones(2, 2), torch.ones(2, 2)], [2, 3], "fake", None),
    ("while_mutation", "test_control_flow.py WHILE_LOOP_TESTS simple_with_mutation (autograd)", p_while_mutation,
     lambda: [torch.zeros(3), _f(3).abs() + 1], [0, 1], "fake", None),
    ("while_never", "test_control_flow.py while_loop (near miss: cond_fn false at once)", p_while_never,
     lambda: [_f(3), _f(3)], [0, 1], "fake", None),
    ("cond_inplace", "test_control_flow.py test_cond_functionalized (autograd)", p_cond_inplace,
     lambda: [_f(3), _f(3)], [0, 1], "fake", None),
    ("map_inplace", "test_control_flow.py test_map_functionalized (autograd)", p_map_inplace,
     lambda: [_f(4, 3), _f(3)], [0, 1], "fake", None),
    ("scan_inplace", "test_control_flow.py scan with in-place ops in combine_fn (autograd)", p_scan_inplace,
     lambda: [_f(3), _f(4, 3), _f(3)], [0, 1, 2], "fake", None),
    ("cond_constant", "test_control_flow.py test_cond_functionalized-like: tensor constants in a branch and a nested body (autograd)",
     p_cond_constant, lambda: [torch.tensor(0), _f(3), _f(3)], [1, 2], "fake", None),
]
