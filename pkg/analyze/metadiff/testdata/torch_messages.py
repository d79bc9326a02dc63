"""Generate torch_messages.json: check_meta_consistency messages built from
torch's own str() of sizes, strides, dtypes, memory formats and qparams.

Run with Debian's torch 1.13 (/usr/bin/python3). torch 1.13 has no
check_meta_consistency (2.x only), so the function below restates it from
torch/_higher_order_ops/utils.py (diff_tensor_meta over
_extract_tensor_metadata, device checked separately); every printed value
comes from torch objects. Tensors are printed as torch 2.x prints a
FakeTensor: FakeTensor(..., size=(2, 3)[, dtype=...]).

    /usr/bin/python3 torch_messages.py > torch_messages.json
"""
import json
import sys

import torch
from torch.fx.passes.shape_prop import TensorMetadata, _extract_tensor_metadata

# torch 1.13 has no torch.SymInt; the ints here are plain ints.
INT_TYPES = (int, torch.SymInt) if hasattr(torch, "SymInt") else (int,)


class Fake:
    """Prints a tensor as torch 2.x's Tensor.__repr__ prints a FakeTensor."""

    def __init__(self, t):
        self.t = t

    def __repr__(self):
        t = self.t
        suffixes = []
        if t.device.type != "cpu":
            suffixes.append("device='" + str(t.device) + "'")
        suffixes.append("size=" + str(tuple(t.shape)))
        if t.is_quantized:
            # _str_intern's quantized branch.
            if t.dtype not in (torch.get_default_dtype(), torch.complex64, torch.int64, torch.bool):
                suffixes.append("dtype=" + str(t.dtype))
            suffixes.append("quantization_scheme=" + str(t.qscheme()))
            if t.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
                suffixes.append("scale=" + str(t.q_scale()))
                suffixes.append("zero_point=" + str(t.q_zero_point()))
        elif t.dtype != torch.get_default_dtype():
            suffixes.append("dtype=" + str(t.dtype))
        if t.requires_grad:
            suffixes.append("requires_grad=True")
        return "FakeTensor(..., " + ", ".join(suffixes) + ")"

    __str__ = __repr__


def extract(t, include_contiguity):
    m = _extract_tensor_metadata(t)
    if not include_contiguity:
        m = m._replace(memory_format=None)
    return m


def diff_tensor_meta(m1, m2, check_grad=True):
    out = []
    for name in TensorMetadata._fields:
        if not check_grad and name == "requires_grad":
            continue
        v1, v2 = getattr(m1, name), getattr(m2, name)
        if v1 != v2:
            out.append(f"'{name}: {v1} vs {v2}'")
    return out


def check_meta_consistency(lhs_list, rhs_list, lhs_name, rhs_name, include_contiguity=True):
    def show(x):
        return Fake(x) if isinstance(x, torch.Tensor) else x

    if len(lhs_list) != len(rhs_list):
        return (f"Expected {lhs_name} and {rhs_name} to have same number of outputs but got "
                f"lhs:{type(lhs_list)(show(x) for x in lhs_list)} and rhs:{type(rhs_list)(show(x) for x in rhs_list)}")
    lines = []
    for i, (lhs, rhs) in enumerate(zip(lhs_list, rhs_list)):
        diff = ""
        if isinstance(lhs, torch.Tensor) and isinstance(rhs, torch.Tensor):
            diff = ", ".join(diff_tensor_meta(extract(lhs, include_contiguity), extract(rhs, include_contiguity), check_grad=False))
        elif not (isinstance(lhs, INT_TYPES) and isinstance(rhs, INT_TYPES)):
            diff = f"type: {show(lhs)} vs {show(rhs)}"
        if diff:
            lines.append(f"pair[{i}] differ in {diff}, where lhs is {show(lhs)} and rhs is {show(rhs)}")
        if isinstance(lhs, torch.Tensor) and isinstance(rhs, torch.Tensor):
            if lhs.device.type != rhs.device.type or lhs.device.index != rhs.device.index:
                lines.append(f"pair[{i}] differ in device, where lhs is {show(lhs)} and rhs is {show(rhs)}")
    if not lines:
        return ""
    return f"Expected {lhs_name} and {rhs_name} to have same metadata but found:\n" + "\n".join(lines)


def dump(x):
    """The value as the Go test rebuilds it (hopctl's value fields)."""
    if isinstance(x, torch.Tensor):
        m = _extract_tensor_metadata(x)
        d = {
            "shape": list(x.shape),
            "stride": list(x.stride()),
            "dtype": str(x.dtype).replace("torch.", ""),
            "device": str(x.device),
            "requires_grad": x.requires_grad,
            "memory_format": str(m.memory_format).replace("torch.", "") if m.memory_format is not None else "",
            "is_quantized": x.is_quantized,
        }
        if x.is_quantized:
            d["qscheme"] = str(x.qscheme()).replace("torch.", "")
            d["scale"] = x.q_scale()
            d["zero_point"] = x.q_zero_point()
        return {"tensor": d}
    if x is None:
        return {"none": True}
    if isinstance(x, bool):
        return {"bool": x}
    if isinstance(x, int):
        return {"int": x}
    if isinstance(x, float):
        return {"float": x}
    raise TypeError(type(x))


def t(*shape, stride=None, dtype=torch.float32, device="cpu", requires_grad=False):
    if stride is None:
        x = torch.empty(shape, dtype=dtype, device=device)
    else:
        x = torch.empty_strided(shape, stride, dtype=dtype, device=device)
    return x.requires_grad_(requires_grad)


def cases():
    x = t(2, 3)
    yield "while_loop_t_contiguous", (1, x), (1, x.t().contiguous()), "carried_inputs", "body_output", False
    yield "scan_cat", [t(4)], [t(8)], "init", "carry", False
    yield "all_fields_contiguity", [t(2, 3)], [t(3, 2, dtype=torch.int64).t()], "lhs", "rhs", True
    yield "stride_only", [t(2, 3)], [t(2, 3, stride=(1, 2))], "lhs", "rhs", False
    yield "memory_format", [t(1, 3, 4, 4)], [t(1, 3, 4, 4).contiguous(memory_format=torch.channels_last)], "lhs", "rhs", True
    yield "memory_format_ignored", [t(1, 3, 4, 4)], [t(1, 3, 4, 4).contiguous(memory_format=torch.channels_last)], "lhs", "rhs", False
    yield "requires_grad_not_compared", [t(2, requires_grad=True)], [t(2)], "lhs", "rhs", False
    yield "type_tensor_vs_int", [t(2), 3], [3, t(2)], "init", "carry", False
    yield "type_float_none", [1.5, None, True], [2.5, None, 7], "lhs", "rhs", False
    yield "ints_never_differ", [1, 2], [3, 4], "lhs", "rhs", False
    yield "device", [t(2)], [t(2, device="meta")], "lhs", "rhs", False
    yield "device_and_dtype", [t(2, 2)], [t(2, 2, dtype=torch.float16, device="meta")], "lhs", "rhs", False
    q = torch.quantize_per_tensor(torch.zeros(4), 0.1, 3, torch.quint8)
    yield "quantized", [t(4)], [q], "lhs", "rhs", False
    q2 = torch.quantize_per_tensor(torch.zeros(4), 1e-05, 0, torch.quint8)
    yield "qparams", [q], [q2], "lhs", "rhs", False
    yield "scalar_shapes", [t()], [t(1)], "lhs", "rhs", False
    yield "length", (t(2), 1), (t(2),), "carried_inputs", "body_output", False
    yield "length_list", [t(2, 3, dtype=torch.int64)], [], "init", "carry", False


def main():
    out = []
    for name, lhs, rhs, ln, rn, contig in cases():
        out.append({
            "name": name, "lhs_name": ln, "rhs_name": rn, "include_contiguity": contig,
            "lhs_tuple": isinstance(lhs, tuple), "rhs_tuple": isinstance(rhs, tuple),
            "lhs": [dump(v) for v in lhs], "rhs": [dump(v) for v in rhs],
            "message": check_meta_consistency(lhs, rhs, ln, rn, contig),
        })
    json.dump({"torch": torch.__version__, "cases": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
