"""hopctl.v1.File -> executable torch.fx.GraphModule."""

import os
import warnings

import torch
import torch.fx

from . import _common as C
from . import _constants as K
from ._proto.hopctl.v1 import graph_pb2 as pb
from ._values import OpaqueValue, SymDesc, TensorDesc

try:
    from torch.fx.passes.shape_prop import TensorMetadata
except Exception:  # pragma: no cover
    TensorMetadata = None

_OPS = {
    pb.PLACEHOLDER: "placeholder",
    pb.GET_ATTR: "get_attr",
    pb.CALL_FUNCTION: "call_function",
    pb.CALL_METHOD: "call_method",
    pb.CALL_MODULE: "call_module",
    pb.OUTPUT: "output",
}


# Keys load sets itself; an "extra" entry never overrides them.
_RESERVED_META = frozenset((
    "val", "tensor_meta", "example_value", "stack_trace", "nn_module_stack",
    "source_fn_stack", "source_fn", "seq_nr", "fwd_source",
))


class LoadError(ValueError):
    pass


def load(path):
    """Rebuild an executable torch.fx.GraphModule from a hopctl file (.pb, .json, .pbtxt)."""
    path = os.fspath(path)
    msg = C.read_file(path)
    return from_proto(msg, path)


def from_proto(msg, source="<message>"):
    C.check_version(msg, source)
    return _Loader(msg, source).run()


def _value(v):
    kind = v.WhichOneof("kind")
    if kind == "tensor":
        return TensorDesc(v.tensor)
    if kind == "sym":
        return SymDesc(v.sym)
    if kind == "list":
        return [_value(x) for x in v.list.items]
    if kind == "tuple":
        return tuple(_value(x) for x in v.tuple.items)
    if kind == "none" or kind is None:
        return None
    if kind == "opaque":
        return OpaqueValue(v.opaque)
    return getattr(v, kind)


def _tensor_metadata(desc):
    if TensorMetadata is None or desc.dtype is None or desc.is_symbolic():
        return None
    qparams = {}
    if desc.is_quantized and desc.qparams:
        q = desc.qparams
        qs = getattr(torch, q["qscheme"], None) if q["qscheme"] else None
        if qs is not None:
            qparams["qscheme"] = qs
        if q["scales"]:
            qparams["scale"], qparams["zero_point"], qparams["axis"] = (
                q["scales"], q["zero_points"], q["axis"])
        else:
            qparams["scale"], qparams["zero_point"] = q["scale"], q["zero_point"]
    return TensorMetadata(desc.shape, desc.dtype, desc.requires_grad, tuple(desc.stride()),
                          desc.memory_format, desc.is_quantized, qparams)


_QUANT_INT = {"quint8": torch.uint8, "qint8": torch.int8, "qint32": torch.int32}


def _tensor_from_attribute(a, ctx):
    m = a.meta
    for d in list(m.shape) + list(m.stride):
        if d.WhichOneof("kind") != "value":
            raise LoadError("%s: attribute has a symbolic shape or stride" % ctx)
    shape = [d.value for d in m.shape]
    stride = [d.value for d in m.stride] or None
    if m.layout not in ("", "strided"):
        raise LoadError("%s: attribute layout %r is not supported" % (ctx, m.layout))
    try:
        dtype = C.parse_dtype(m.dtype)
    except ValueError:
        raise LoadError("%s: unknown dtype %r" % (ctx, m.dtype)) from None
    storage_dtype = _QUANT_INT.get(m.dtype, dtype) if m.is_quantized else dtype
    numel = 1
    for s in shape:
        if s < 0:
            raise LoadError("%s: negative size in shape %s" % (ctx, shape))
        numel *= s
    elem = torch.empty((), dtype=storage_dtype).element_size()
    if not a.data and numel > 0:
        warnings.warn("%s: attribute has no data in the file; filled with zeros" % ctx)
        flat = torch.zeros(numel, dtype=storage_dtype)
    elif len(a.data) != numel * elem:
        raise LoadError("%s: attribute data has %d bytes, expected %d (%s of %s)"
                        % (ctx, len(a.data), numel * elem, shape, m.dtype))
    elif numel == 0:
        flat = torch.empty(0, dtype=storage_dtype)
    else:
        flat = torch.frombuffer(bytearray(a.data), dtype=storage_dtype)
        if _big_endian() and elem > 1:  # pragma: no cover
            es = elem // (2 if flat.is_complex() else 1)
            flat = flat.view(torch.uint8).reshape(-1, es).flip(1).contiguous().view(storage_dtype)
    t = flat.reshape(shape)
    if stride is not None and len(stride) == len(shape) and tuple(stride) != t.stride():
        out = torch.empty_strided(shape, stride, dtype=storage_dtype)
        out.copy_(t)
        t = out
    if m.is_quantized:
        q = m.qparams
        if q.scales:
            t = torch._make_per_channel_quantized_tensor(
                t, torch.tensor(list(q.scales), dtype=torch.double),
                torch.tensor(list(q.zero_points), dtype=torch.long), q.axis)
        else:
            t = torch._make_per_tensor_quantized_tensor(t, q.scale, q.zero_point)
    if m.device and m.device != "cpu":
        try:
            t = t.to(m.device)
        except Exception as e:
            warnings.warn("%s: cannot place attribute on %s (%s); kept on cpu" % (ctx, m.device, e))
    if m.requires_grad and (t.is_floating_point() or t.is_complex()):
        t.requires_grad_(True)
    return t


def _big_endian():
    import sys
    return sys.byteorder == "big"


def _set_path(owner, target, obj):
    *prefix, field = target.split(".")
    mod = owner
    for part in prefix:
        nxt = getattr(mod, part, None)
        if nxt is None:
            nxt = torch.nn.Module()
            mod.add_module(part, nxt)
        elif not isinstance(nxt, torch.nn.Module):
            raise LoadError("%r: %r is not a module" % (target, part))
        mod = nxt
    if isinstance(obj, torch.nn.Module):
        if getattr(mod, field, None) is obj:
            return
        mod.add_module(field, obj)
    elif not isinstance(obj, torch.Tensor):  # a constant (a TreeSpec, ...)
        setattr(mod, field, obj)
    else:
        if field in mod._buffers:
            return
        mod.register_buffer(field, obj)


class _Loader:
    def __init__(self, msg, source):
        self.msg = msg
        self.source = source

    def _err(self, text):
        return LoadError("%s: %s" % (self.source, text))

    def run(self):
        msg = self.msg
        if not msg.HasField("graph"):
            raise self._err("file has no root graph")
        graphs = {"": msg.graph}
        for s in msg.submodules:
            q = s.qualified_name
            if not q or q in graphs:
                raise self._err("submodule with %s qualified name %r"
                                % ("empty" if not q else "duplicate", q))
            graphs[q] = s.graph
        self.attrs = {}
        for a in msg.attributes:
            if a.qualified_name in self.attrs or a.qualified_name in graphs:
                raise self._err("duplicate attribute %r" % a.qualified_name)
            self.attrs[a.qualified_name] = a
        self.tensors = {}
        built = {}
        # Children have strictly longer qualified names (parent + "." + target),
        # so building the deepest names first never needs recursion.
        for q in sorted(graphs, key=lambda q: (-(q.count(".") + 1 if q else 0), q)):
            built[q] = self._module(q, graphs[q], graphs, built)
        gm = built[""]
        if msg.annotations:
            gm.hopctl_annotations = {a.key: a.value for a in msg.annotations}
        if msg.HasField("grad_enabled"):
            gm.hopctl_grad_enabled = msg.grad_enabled
        if msg.HasField("inference_mode"):
            gm.hopctl_inference_mode = msg.inference_mode
        return gm

    def _label(self, q):
        return "graph %s" % (repr(q) if q else "'' (root)")

    def _module(self, q, g, graphs, built):
        fx_graph, refs = self._graph(q, g)
        owner = torch.nn.Module()
        for target, node_name in sorted(refs.items(), key=lambda kv: (kv[0].count("."), kv[0])):
            full = q + "." + target if q else target
            if full in graphs:
                obj = built.get(full)
                if obj is None:
                    raise self._err("%s: node %r: submodule %r is not built"
                                    % (self._label(q), node_name, full))
            elif full in self.attrs:
                obj = self.tensors.get(full)
                if obj is None:
                    a = self.attrs[full]
                    ctx = "%s: attribute %r" % (self.source, full)
                    if a.HasField("constant"):
                        try:
                            obj = self._arg(a.constant, {})
                        except LoadError as e:
                            raise LoadError("%s: %s" % (ctx, e)) from None
                    else:
                        obj = _tensor_from_attribute(a, ctx)
                    self.tensors[full] = obj
            else:
                raise self._err("%s: node %r: target %r is neither a submodule nor an "
                                "attribute in the file" % (self._label(q), node_name, full))
            try:
                _set_path(owner, target, obj)
            except (LoadError, KeyError, TypeError) as e:
                raise self._err("%s: node %r: %s" % (self._label(q), node_name, e)) from None
        try:
            return torch.fx.GraphModule(owner, fx_graph)
        except Exception as e:
            raise self._err("%s: cannot build GraphModule: %s" % (self._label(q), e)) from e

    def _graph(self, q, g):
        graph = torch.fx.Graph()
        env = {}
        refs = {}
        seen_output = False
        for n in g.nodes:
            ctx = "%s: node %r" % (self._label(q), n.name)
            if not n.name:
                raise self._err("%s: node without a name" % self._label(q))
            if n.name in env:
                raise self._err("%s: duplicate node name" % ctx)
            if seen_output:
                raise self._err("%s: node after the output node" % ctx)
            op = _OPS.get(n.op)
            if op is None:
                raise self._err("%s: unknown op kind %d" % (ctx, n.op))
            try:
                target = self._target(op, n)
                args = tuple(self._arg(a, env) for a in n.args)
                kwargs = {k.name: self._arg(k.value, env) for k in n.kwargs}
            except LoadError as e:
                raise self._err("%s: %s" % (ctx, e)) from None
            if op == "output":
                if len(args) != 1 or kwargs:
                    raise self._err("%s: the output node must have exactly one argument" % ctx)
                seen_output = True
            if op in ("get_attr", "call_module"):
                refs.setdefault(target, n.name)
            node = graph.create_node(op, target, args, kwargs, name=n.name)
            env[n.name] = node
            self._meta(node, n)
        if not seen_output:
            raise self._err("%s: no output node" % self._label(q))
        try:
            graph.lint()
        except Exception as e:
            raise self._err("%s: invalid graph: %s" % (self._label(q), e)) from e
        return graph, refs

    def _target(self, op, n):
        t = n.target
        if op == "call_function":
            try:
                return C.resolve_target(t)
            except LookupError as e:
                raise LoadError(str(e)) from None
        if op == "output":
            return "output"
        if not t:
            raise LoadError("empty %s target" % op)
        return t

    def _arg(self, a, env):
        kind = a.WhichOneof("kind")
        if kind == "node":
            node = env.get(a.node)
            if node is None:
                raise LoadError("argument refers to %r, which is not defined before this node"
                                % a.node)
            return node
        if kind in ("int", "float", "bool", "str"):
            return getattr(a, kind)
        if kind == "none":
            return None
        if kind == "list":
            return [self._arg(x, env) for x in a.list.items]
        if kind == "tuple":
            return tuple(self._arg(x, env) for x in a.tuple.items)
        if kind == "dict":
            return {e.name: self._arg(e.value, env) for e in a.dict.entries}
        if kind == "complex":
            return complex(a.complex.real, a.complex.imag)
        try:
            if kind == "dtype":
                return C.parse_dtype(a.dtype)
            if kind == "device":
                return torch.device(a.device)
            if kind == "layout":
                return C.parse_layout(a.layout)
            if kind == "memory_format":
                return C.parse_memory_format(a.memory_format)
        except (ValueError, RuntimeError) as e:
            raise LoadError(str(e)) from None
        if kind == "op":
            try:
                return C.resolve_target(a.op)
            except LookupError as e:
                raise LoadError(str(e)) from None
        if kind == "slice":
            s = a.slice
            return slice(*(self._arg(x, env) if x.WhichOneof("kind") else None
                           for x in (s.start, s.stop, s.step)))
        if kind == "ellipsis":
            return Ellipsis
        if kind == "constant":
            fields = [(e.name, self._arg(e.value, env)) for e in a.constant.fields]
            try:
                return K.rebuild(a.constant.type, fields)
            except (ValueError, TypeError, RuntimeError, KeyError) as e:
                raise LoadError("constant of type %r: %s" % (a.constant.type, e)) from None
        if kind == "sym":
            v = SymDesc(a.sym).concrete()
            if v is None:
                raise LoadError("symbolic argument %r has no concrete hint to run with"
                                % a.sym.expr)
            return v
        raise LoadError("empty argument")

    def _meta(self, node, n):
        meta = node.meta
        if n.HasField("val"):
            v = _value(n.val)
            meta["val"] = v
            if isinstance(v, TensorDesc):
                tm = _tensor_metadata(v)
                if tm is not None:
                    meta["tensor_meta"] = tm
        if not n.HasField("meta"):
            return
        m = n.meta
        for e in m.extra:
            if e.key not in _RESERVED_META:
                meta[e.key] = e.value
        if m.stack_trace:
            meta["stack_trace"] = m.stack_trace
        if len(m.nn_module_stack):
            meta["nn_module_stack"] = {e.key: (e.path, e.type) for e in m.nn_module_stack}
        if len(m.source_fn_stack):
            meta["source_fn_stack"] = [
                (e.key, e.type) if not e.path else (e.key, e.type, e.path)
                for e in m.source_fn_stack]
        if m.HasField("seq_nr"):
            meta["seq_nr"] = m.seq_nr
        if m.fwd_source:
            meta["fwd_source"] = m.fwd_source
