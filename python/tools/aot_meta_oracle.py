"""AOTAutograd's own view and mutation metadata for a program, and the
programs hopctl's `view_meta` is checked against.

observe(fn, args) runs torch's run_functionalized_fw_and_collect_metadata
(torch/_functorch/_aot_autograd/collect_metadata_analysis.py) on fake copies
of args, as aot_function does, and returns the fields of ViewAndMutationMeta
hopctl reports (schemas.py: InputAliasInfo, OutputAliasInfo, OutputType) as
plain JSON values. keep_input_mutations is what AOTAutograd passes for
inductor: True unless the program needs autograd (an input requires grad and
grad mode is on; aot_autograd.py's needs_autograd).

PROGRAMS are modelled on test/functorch/test_aotdispatch.py's input-mutation
and output-aliasing tests (test_input_mutation_*, test_output_aliases_*,
test_input_data_and_metadata_mutation*, test_set__*, ...): each is
(name, fn, make_inputs), make_inputs() returning fresh tensors. As in that
file's verify_aot_autograd, an input that requires grad and is mutated is a
non-leaf (x.clone()): autograd refuses in-place writes to a leaf.
"""

import torch

INPUT_FIELDS = ("mutates_data", "mutates_metadata", "mutates_storage_metadata",
                "mutations_hidden_from_autograd", "mutations_under_no_grad_or_inference_mode",
                "requires_grad", "keep_input_mutations", "mutation_type")
OUTPUT_FIELDS = ("output_type", "base_idx", "requires_grad")


def _nl(*shape):
    """A non-leaf tensor that requires grad (verify_aot_autograd's inputs)."""
    return torch.randn(*shape, requires_grad=True).clone()


def _r(*shape):
    return torch.randn(*shape)


def needs_autograd(args):
    return torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)


def observe(fn, args):
    """ViewAndMutationMeta's fields for fn(*args), from torch itself."""
    from torch._functorch._aot_autograd.collect_metadata_analysis import run_functionalized_fw_and_collect_metadata
    from torch._subclasses.fake_tensor import FakeTensorMode
    keep = not needs_autograd(args)
    mode = FakeTensorMode()
    fake = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
    kwargs = {"keep_input_mutations": keep}
    try:
        from torch._functorch._aot_autograd.descriptors import PlainAOTInput
        kwargs["flat_args_descs"] = [PlainAOTInput(i) for i in range(len(fake))]
    except ImportError:  # torch 2.6 has no descriptors
        pass
    from torch._dispatch.python import enable_python_dispatcher
    from torch.utils import _pytree as pytree

    def flat(*a):
        return pytree.tree_leaves(fn(*a))
    with enable_python_dispatcher():
        meta = run_functionalized_fw_and_collect_metadata(flat, **kwargs)(*fake)
    inputs = []
    for info in meta.input_info:
        inputs.append({
            "mutates_data": bool(info.mutates_data),
            "mutates_metadata": bool(info.mutates_metadata),
            "mutates_storage_metadata": bool(info.mutates_storage_metadata),
            "mutations_hidden_from_autograd": bool(info.mutations_hidden_from_autograd),
            "mutations_under_no_grad_or_inference_mode": bool(info.mutations_under_no_grad_or_inference_mode),
            "requires_grad": bool(info.requires_grad),
            "keep_input_mutations": bool(info.keep_input_mutations),
            "mutation_type": info.mutation_type.name,
        })
    outputs = []
    for info in meta.output_info:
        outputs.append({
            "output_type": info.output_type.name,
            "base_idx": info.base_idx,
            "requires_grad": bool(info.requires_grad),
        })
    return {"inputs": inputs, "outputs": outputs}


def _set_no_grad(x, y):
    with torch.no_grad():
        x.set_(y)
    return x + 1


def _mul_no_grad(x):
    with torch.no_grad():
        x.mul_(2)
    return x + 1


def _data_mul(x):
    x.data.mul_(2)
    return x + 1


def _detach_mul(x):
    x.detach().mul_(2)
    return x + 1


def _inter_views(x):
    y = x * 2
    return y[0], y[1]


def _inter_view_and_base(x):
    y = x * 2
    return y, y.view(-1)


def _inter_one_view(x):
    y = x * 2
    return y.view(-1)


PROGRAMS = [
    # input mutations (test_input_mutation_*)
    ("mut_simple", lambda x: x.mul_(2), lambda: [_r(3, 3)]),
    ("mut_simple_rg", lambda x: (x.mul_(2), x + 1)[1], lambda: [_nl(3, 3)]),
    ("mut_return", lambda x: x.mul_(2), lambda: [_nl(3, 3)]),
    ("mut_two", lambda x, y: (x.add_(1), y.mul_(2), x + y)[2], lambda: [_r(4), _r(4)]),
    ("mut_one_of_two", lambda x, y: (x.add_(1), x * y)[1], lambda: [_nl(4), _nl(4)]),
    ("mut_view_of_input", lambda x: (x[0].add_(1), x.sum())[1], lambda: [_r(3, 3)]),
    ("mut_view_of_input_rg", lambda x: (x.view(-1).mul_(2), x * 3)[1], lambda: [_nl(3, 3)]),
    ("mut_copy_", lambda x, y: (x.copy_(y), x + 1)[1], lambda: [_r(3), _r(3)]),
    ("mut_fill_", lambda x: (x.fill_(1), x.sum())[1], lambda: [_r(3)]),
    ("mut_twice", lambda x: (x.mul_(2), x.add_(1), x.sin())[2], lambda: [_r(3)]),
    ("mut_index_put", lambda x, i: (x.index_put_((i,), x.new_ones(2)), x + 1)[1],
     lambda: [_r(4), torch.tensor([0, 2])]),
    ("mut_no_grad", _mul_no_grad, lambda: [_nl(3)]),
    ("mut_data", _data_mul, lambda: [_nl(3)]),
    ("mut_detach", _detach_mul, lambda: [_nl(3)]),
    ("mut_int_input", lambda x: (x.add_(1), x * 2)[1], lambda: [torch.arange(4)]),
    # metadata-only mutations (test_input_mutation_metadata*)
    ("meta_t_", lambda x: (x.t_(), x + 1)[1], lambda: [_r(2, 3)]),
    ("meta_t_rg", lambda x: (x.t_(), x + 1)[1], lambda: [_nl(2, 3)]),
    ("meta_transpose_", lambda x: (x.transpose_(0, 1), x * 2)[1], lambda: [_r(2, 3)]),
    ("meta_unsqueeze_", lambda x: (x.unsqueeze_(0), x * 2)[1], lambda: [_r(3)]),
    ("meta_squeeze_", lambda x: (x.squeeze_(0), x * 2)[1], lambda: [_r(1, 3)]),
    ("meta_as_strided_", lambda x: (x.as_strided_((2,), (2,)), x * 2)[1], lambda: [_r(4)]),
    ("meta_t_t_", lambda x: (x.t_().t_(), x + 1)[1], lambda: [_r(2, 3)]),
    ("meta_t_of_view", lambda x: (x.view(2, 3).t_(), x + 1)[1], lambda: [_r(6)]),
    ("meta_and_data", lambda x: (x.t_(), x.mul_(2), x + 1)[2], lambda: [_r(2, 3)]),
    ("meta_return_input", lambda x: x.t_(), lambda: [_r(2, 3)]),
    ("meta_resize_", lambda x: (x.resize_(2), x * 2)[1], lambda: [_r(4)]),
    ("set_no_grad", _set_no_grad, lambda: [_r(4), _r(4)]),
    # outputs (test_output_aliases_*, test_output_op_depending_on_symint)
    ("out_fresh", lambda x: x * 2, lambda: [_r(3)]),
    ("out_is_input", lambda x: x, lambda: [_r(3)]),
    ("out_is_input_rg", lambda x: (x, x.sin()), lambda: [torch.randn(3, requires_grad=True)]),
    ("out_view_of_input", lambda x: x.view(-1), lambda: [_r(2, 3)]),
    ("out_view_of_input_rg", lambda x: x.view(-1), lambda: [torch.randn(2, 3, requires_grad=True)]),
    ("out_two_views", lambda x: (x[0], x[1]), lambda: [_r(2, 3)]),
    ("out_t_of_input", lambda x: x.t(), lambda: [_r(2, 3)]),
    ("out_reshape_copy", lambda x: x.t().reshape(-1), lambda: [_r(2, 3)]),
    ("out_reshape_view", lambda x: x.reshape(-1), lambda: [_r(2, 3)]),
    ("out_unbind_rg", lambda x: x.unbind(0), lambda: [torch.randn(2, 3, requires_grad=True)]),
    ("out_unbind", lambda x: x.unbind(0), lambda: [_r(2, 3)]),
    ("out_inter_views", _inter_views, lambda: [torch.randn(2, 3, requires_grad=True)]),
    ("out_inter_views_nograd", _inter_views, lambda: [_r(2, 3)]),
    ("out_inter_view_and_base", _inter_view_and_base, lambda: [torch.randn(2, 3, requires_grad=True)]),
    ("out_inter_one_view", _inter_one_view, lambda: [torch.randn(2, 3, requires_grad=True)]),
    ("out_mutated_input", lambda x: x.add_(1), lambda: [_r(3)]),
    ("out_view_of_mutated", lambda x: (x.mul_(2), x.view(-1))[1], lambda: [_r(2, 3)]),
    ("out_detach", lambda x: x.detach(), lambda: [torch.randn(3, requires_grad=True)]),
    ("out_alias_op", lambda x: torch.ops.aten.alias(x), lambda: [_r(3)]),
    ("out_input_twice", lambda x: (x, x), lambda: [_r(3)]),
    ("out_int", lambda x: x.argmax(), lambda: [torch.randn(3, requires_grad=True)]),
    # inputs that share storage (test_input_mutation_aliases_*)
    ("shared_views_first_written", lambda a, b: (a.mul_(2), a + b)[1], "views"),
    ("shared_views_second_written", lambda a, b: (b.mul_(2), a + b)[1], "views"),
    ("shared_same_tensor", lambda a, b: (a.mul_(2), a + b)[1], "same"),
    ("shared_out_is_second", lambda a, b: b, "views"),
]


def inputs_of(make):
    """Fresh inputs: a maker, or "views" (x[0], x[1] of one tensor) or
    "same" (one tensor twice)."""
    if make == "views":
        base = torch.randn(2, 3)
        return [base[0], base[1]]
    if make == "same":
        t = torch.randn(3)
        return [t, t]
    return make()


if __name__ == "__main__":
    import json
    import sys
    names = set(sys.argv[1:])
    for name, fn, make in PROGRAMS:
        if names and name not in names:
            continue
        try:
            print(name, json.dumps(observe(fn, inputs_of(make))))
        except Exception as e:  # noqa: BLE001 - a probe
            print(name, "ERROR", type(e).__name__, str(e).splitlines()[0][:200])
