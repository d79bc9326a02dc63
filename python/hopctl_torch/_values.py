"""Lightweight descriptions of node values read from a hopctl file.

`load` puts these in ``node.meta["val"]``. They carry exactly what the file
says (``export`` writes them back unchanged, so load -> export is lossless) and
offer the tensor-like metadata accessors analysis passes commonly use
(``shape``, ``dtype``, ``device``, ``stride()``, ``storage_offset()``, ...).
"""

import torch

from ._common import MEMORY_FORMATS, parse_dtype, parse_layout
from ._proto.hopctl.v1 import graph_pb2 as pb

__all__ = ["TensorDesc", "SymDesc", "OpaqueValue"]


def _dim(d):
    kind = d.WhichOneof("kind")
    if kind == "value":
        return d.value
    if kind == "expr":
        return d.expr
    return None


class TensorDesc:
    """Tensor metadata from a hopctl file (a hopctl.v1.TensorMeta).

    Sizes/strides are ints, or strings for symbolic dimensions ("s0*2").
    dtype/device/layout/memory_format are torch objects, or None when the file
    leaves them empty (unknown) or this torch does not know the name.
    """

    __slots__ = ("shape", "_stride", "_storage_offset", "dtype", "device", "requires_grad",
                 "memory_format", "is_quantized", "qparams", "layout", "storage_id", "_pb")

    def __init__(self, meta):
        self._pb = pb.TensorMeta()
        self._pb.CopyFrom(meta)
        dims = tuple(_dim(d) for d in meta.shape)
        self.shape = torch.Size(dims) if all(isinstance(d, int) for d in dims) else dims
        self._stride = tuple(_dim(d) for d in meta.stride)
        self._storage_offset = _dim(meta.storage_offset) if meta.HasField("storage_offset") else None
        self.dtype = _try(parse_dtype, meta.dtype)
        self.device = _try(torch.device, meta.device)
        self.layout = _try(parse_layout, meta.layout)
        self.requires_grad = meta.requires_grad
        self.memory_format = dict(MEMORY_FORMATS).get(meta.memory_format)
        self.is_quantized = meta.is_quantized
        self.qparams = {}
        if meta.HasField("qparams"):
            q = meta.qparams
            self.qparams = {"qscheme": q.qscheme, "scale": q.scale, "zero_point": q.zero_point,
                            "scales": list(q.scales), "zero_points": list(q.zero_points),
                            "axis": q.axis}
        self.storage_id = meta.storage_id if meta.HasField("storage_id") else None

    def to_proto(self):
        m = pb.TensorMeta()
        m.CopyFrom(self._pb)
        return m

    # Tensor-like accessors.
    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[dim]

    def storage_offset(self):
        return self._storage_offset

    def dim(self):
        return len(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def is_symbolic(self):
        dims = list(self.shape) + list(self._stride) + [self._storage_offset]
        return any(isinstance(d, str) for d in dims)

    def __eq__(self, other):
        return isinstance(other, TensorDesc) and self._pb == other._pb

    def __hash__(self):
        return hash(self._pb.SerializeToString(deterministic=True))

    def __repr__(self):
        dt = self._pb.dtype or "?"
        shape = ", ".join(str(d) for d in self.shape)
        extra = ""
        if self.storage_id is not None:
            extra = ", storage_id=%d" % self.storage_id
        return "TensorDesc(%s[%s], stride=%s, device=%r%s)" % (
            dt, shape, self._stride, self._pb.device, extra)


class SymDesc:
    """A symbolic int/float/bool from a hopctl file: kind ("SymInt", ...), expr, hint."""

    __slots__ = ("kind", "expr", "hint", "_pb")

    def __init__(self, sym):
        self._pb = pb.SymExpr()
        self._pb.CopyFrom(sym)
        self.kind = {pb.SYM_INT: "SymInt", pb.SYM_FLOAT: "SymFloat",
                     pb.SYM_BOOL: "SymBool"}.get(sym.kind, "")
        self.expr = sym.expr
        self.hint = sym.hint if sym.HasField("hint") else None

    def to_proto(self):
        m = pb.SymExpr()
        m.CopyFrom(self._pb)
        return m

    def concrete(self):
        """The hint as a Python value, or None."""
        if self.hint is None:
            return None
        if self.kind == "SymBool":
            return self.hint in ("True", "true", "1")
        if self.kind == "SymFloat":
            return float(self.hint)
        return int(self.hint)

    def __eq__(self, other):
        return isinstance(other, SymDesc) and self._pb == other._pb

    def __hash__(self):
        return hash((self.kind, self.expr, self.hint))

    def __repr__(self):
        return "SymDesc(%s %s%s)" % (self.kind, self.expr,
                                     "" if self.hint is None else ", hint=" + self.hint)


class OpaqueValue:
    """A value the exporter could not describe, by its Python type name."""

    __slots__ = ("type_name",)

    def __init__(self, type_name):
        self.type_name = type_name

    def __eq__(self, other):
        return isinstance(other, OpaqueValue) and self.type_name == other.type_name

    def __hash__(self):
        return hash(self.type_name)

    def __repr__(self):
        return "OpaqueValue(%s)" % self.type_name


def _try(f, s):
    if not s:
        return None
    try:
        return f(s)
    except Exception:
        return None
