"""torch.fx.GraphModule -> hopctl.v1.File."""

import ctypes
import os
import warnings
import sys

import torch
import torch.fx

from . import _common as C
from . import _constants as K
from . import _ep
from ._proto.hopctl.v1 import graph_pb2 as pb
from ._values import OpaqueValue, SymDesc, TensorDesc

try:  # torch >= 1.12
    from torch.multiprocessing.reductions import StorageWeakRef
except Exception:  # pragma: no cover
    StorageWeakRef = None

try:
    from torch.fx.passes.shape_prop import TensorMetadata
except Exception:  # pragma: no cover
    TensorMetadata = None

_OPS = {
    "placeholder": pb.PLACEHOLDER,
    "get_attr": pb.GET_ATTR,
    "call_function": pb.CALL_FUNCTION,
    "call_method": pb.CALL_METHOD,
    "call_module": pb.CALL_MODULE,
    "output": pb.OUTPUT,
}

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

# Meta keys with a dedicated field (or deliberately not exported).
_HANDLED_META = frozenset((
    "val", "tensor_meta", "example_value", "stack_trace", "nn_module_stack",
    "source_fn_stack", "source_fn", "seq_nr", "fwd_source",
))


class ExportError(ValueError):
    pass


def to_proto(gm, example_inputs=None, grad_enabled=None, inference_mode=None):
    """Describe gm (a GraphModule or an ExportedProgram) as a hopctl.v1.File message (see export)."""
    if _ep.is_exported_program(gm):
        f = _ep.add_signature(_Exporter().run(gm.graph_module, example_inputs), gm)
        try:
            _ep.current_hop_conventions(f)
        except ValueError as e:
            raise ExportError(str(e)) from None
    elif not isinstance(gm, torch.fx.GraphModule):
        raise TypeError("expected a torch.fx.GraphModule or torch.export.ExportedProgram, got %s" % type(gm).__name__)
    else:
        ex = _Exporter()
        f = ex.run(gm, example_inputs)
        if ex.frozen:
            warn_frozen(ex.frozen)
        if grad_enabled is None:
            grad_enabled = getattr(gm, "hopctl_grad_enabled", None)
        if inference_mode is None:
            inference_mode = getattr(gm, "hopctl_inference_mode", None)
    if grad_enabled is not None:
        f.grad_enabled = bool(grad_enabled)
    if inference_mode is not None:
        f.inference_mode = bool(inference_mode)
        # Inference mode disables grad (c10::InferenceMode sets grad_mode
        # to !enabled).
        if inference_mode:
            f.grad_enabled = False
    return f


def warn_frozen(names):
    """Warn that tensors requiring grad are get_attr constants of the graph
    (make_fx of a module without lifting its parameters): hopctl joint gives
    them no gradient."""
    shown = ", ".join(names[:8]) + (" and %d more" % (len(names) - 8) if len(names) > 8 else "")
    warnings.warn(
        "%d tensor(s) requiring grad are get_attr constants of the graph (%s): hopctl joint "
        "gives them no gradient. To differentiate them, make them inputs: trace "
        "torch.func.functional_call(model, params, args) with the parameters as arguments, "
        "or use torch.export, which lifts them." % (len(names), shown),
        stacklevel=3)


def export(gm, path, example_inputs=None, grad_enabled=None, inference_mode=None):
    """Write gm to path; encoding by extension: .pb binary, .json JSON, .pbtxt text.

    gm is a torch.fx.GraphModule or a torch.export.ExportedProgram; a program is
    written as its graph module with its graph signature (which placeholder is a
    parameter, buffer or user input, by state_dict name; which output is a buffer
    or user-input mutation).

    example_inputs: optional flat list with one entry per placeholder of the
    root graph. Tensor placeholders then take their metadata (requires_grad
    included) from the real inputs, and inputs that share storage get equal
    storage_id values.

    grad_enabled: torch.is_grad_enabled() while gm was traced, when the caller
    knows it (dump_backend records it); else gm.hopctl_grad_enabled (set by
    load), else the file leaves it unset (unknown).

    inference_mode: torch.is_inference_mode_enabled() while gm was traced,
    likewise (dump_backend records it; true implies grad_enabled false).
    """
    path = os.fspath(path)
    encoding = C.encoding_for_path(path)
    if encoding is None:
        raise ValueError("%s: unknown extension; use .pb (binary), .json or .pbtxt" % path)
    try:
        msg = to_proto(gm, example_inputs, grad_enabled, inference_mode)
    except ExportError as e:
        raise ExportError("cannot export to %s: %s" % (path, e)) from None
    C.write_atomic(path, C.serialize(msg, encoding))


# ---------------------------------------------------------------------------


def _type_name(obj):
    t = obj if isinstance(obj, type) else type(obj)
    mod = getattr(t, "__module__", None)
    qual = getattr(t, "__qualname__", t.__name__)
    if not mod or mod == "builtins":
        return qual
    return "%s.%s" % (mod, qual)


def _describe_callable(fn):
    """Spelling of a class/function/op recorded in metadata (nn_module_stack types...)."""
    if isinstance(fn, str):
        return fn
    if isinstance(fn, type):
        return _type_name(fn)
    try:
        return C.callable_name(fn)
    except Exception:
        return _type_name(fn)


def _fetch(mod, target):
    obj = mod
    for part in target.split("."):
        if not hasattr(obj, part):
            return None, False
        obj = getattr(obj, part)
    return obj, True


def _is_fake(t):
    if getattr(t, "is_meta", False):
        return True
    for cls in type(t).__mro__:
        if cls.__name__ in ("FakeTensor", "FunctionalTensor"):
            return True
    return False


def storage_key(t):
    """An identity for t's storage, equal for tensors that share storage; None if unknown."""
    try:
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    except Exception:
        return None
    if StorageWeakRef is not None:
        try:
            return ("storage", StorageWeakRef(s).cdata)
        except Exception:
            pass
    try:
        ptr = s.data_ptr()
    except Exception:
        return None
    if ptr == 0:
        return None
    return ("ptr", ptr)


def _tensor_bytes(t):
    """Contiguous little-endian element data of a real tensor, or None for fake/meta tensors."""
    if _is_fake(t):
        return None
    t = t.detach()
    if t.is_quantized:
        t = t.int_repr()
    if hasattr(t, "resolve_conj"):
        t = t.resolve_conj()
    if hasattr(t, "resolve_neg"):
        t = t.resolve_neg()
    t = t.cpu().contiguous()
    n = t.numel() * t.element_size()
    if n == 0:
        return b""
    if sys.byteorder == "big" and t.element_size() > 1:  # pragma: no cover
        es = t.element_size() // (2 if t.is_complex() else 1)
        u8 = t.reshape(-1).view(torch.uint8).reshape(-1, es).flip(1).contiguous()
        return ctypes.string_at(u8.data_ptr(), n)
    return ctypes.string_at(t.data_ptr(), n)


def _set_dim(d, x):
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, int):
        d.value = x
        return
    if C.sym_kind(x) is not None:
        c = C.sym_constant(x)
        if isinstance(c, int) and not isinstance(c, bool):
            d.value = c
        else:
            d.expr = C.sym_expr(x)[0]
        return
    try:
        d.value = int(x)
    except Exception:
        d.expr = str(x)


def _memory_format_of(t):
    for name, fmt in C.MEMORY_FORMATS:
        try:
            if t.is_contiguous(memory_format=fmt):
                return name
        except Exception:
            continue
    return ""


def _qparams_from_tensor(q, t):
    qs = t.qscheme()
    q.qscheme = C.qscheme_name(qs)
    if qs in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        q.scale = float(t.q_scale())
        q.zero_point = int(t.q_zero_point())
    else:
        q.scales.extend(float(v) for v in t.q_per_channel_scales().tolist())
        q.zero_points.extend(int(v) for v in t.q_per_channel_zero_points().tolist())
        q.axis = int(t.q_per_channel_axis())


def tensor_meta_from_tensor(t):
    m = pb.TensorMeta()
    for s in t.shape:
        _set_dim(m.shape.add(), s)
    if t.layout == torch.strided:
        try:
            for s in t.stride():
                _set_dim(m.stride.add(), s)
            _set_dim(m.storage_offset, t.storage_offset())
        except Exception:
            pass
        m.memory_format = _memory_format_of(t)
    m.dtype = C.dtype_name(t.dtype)
    try:
        m.device = str(t.device)
    except Exception:
        pass
    m.requires_grad = bool(t.requires_grad)
    m.is_quantized = bool(t.is_quantized)
    if t.is_quantized:
        try:
            _qparams_from_tensor(m.qparams, t)
        except Exception:
            pass
    m.layout = C.layout_name(t.layout)
    return m


def tensor_meta_from_tensor_metadata(tm):
    """From torch.fx.passes.shape_prop.TensorMetadata (no device, no storage_offset)."""
    m = pb.TensorMeta()
    for s in tm.shape:
        _set_dim(m.shape.add(), s)
    for s in tm.stride:
        _set_dim(m.stride.add(), s)
    m.dtype = C.dtype_name(tm.dtype)
    m.requires_grad = bool(tm.requires_grad)
    m.memory_format = C.memory_format_name(tm.memory_format) if tm.memory_format is not None else ""
    m.is_quantized = bool(tm.is_quantized)
    qp = tm.qparams or {}
    if m.is_quantized and qp:
        q = m.qparams
        if "qscheme" in qp:
            q.qscheme = C.qscheme_name(qp["qscheme"])
        scale, zp = qp.get("scale"), qp.get("zero_point")
        if isinstance(scale, (list, tuple)) or hasattr(scale, "tolist"):
            scale = scale.tolist() if hasattr(scale, "tolist") else scale
            q.scales.extend(float(v) for v in scale)
        elif scale is not None:
            q.scale = float(scale)
        if isinstance(zp, (list, tuple)) or hasattr(zp, "tolist"):
            zp = zp.tolist() if hasattr(zp, "tolist") else zp
            q.zero_points.extend(int(v) for v in zp)
        elif zp is not None:
            q.zero_point = int(zp)
        if qp.get("axis") is not None:
            q.axis = int(qp["axis"])
    m.layout = "strided"
    return m


def _is_tensor_metadata(v):
    return TensorMetadata is not None and isinstance(v, TensorMetadata)


def _set_sym(s, x, kind):
    s.kind = kind
    expr, hint = C.sym_expr(x)
    s.expr = expr
    if hint is not None:
        s.hint = hint


def set_value(out, v):
    """Fill a pb.Value from a node value (meta["val"] / tensor_meta / real input)."""
    if v is None:
        out.none.SetInParent()
    elif isinstance(v, TensorDesc):
        out.tensor.CopyFrom(v.to_proto())
    elif isinstance(v, SymDesc):
        out.sym.CopyFrom(v.to_proto())
    elif isinstance(v, OpaqueValue):
        out.opaque = v.type_name
    elif isinstance(v, torch.Tensor):
        out.tensor.CopyFrom(tensor_meta_from_tensor(v))
    elif _is_tensor_metadata(v):
        out.tensor.CopyFrom(tensor_meta_from_tensor_metadata(v))
    elif isinstance(v, bool):
        out.bool = v
    elif isinstance(v, int):
        if _INT64_MIN <= v <= _INT64_MAX:
            out.int = v
        else:
            out.opaque = "int"
    elif isinstance(v, float):
        out.float = v
    elif C.sym_kind(v) is not None:
        _set_sym(out.sym, v, C.sym_kind(v))
    elif isinstance(v, list):
        out.list.SetInParent()
        for item in v:
            set_value(out.list.items.add(), item)
    elif isinstance(v, tuple):
        out.tuple.SetInParent()
        for item in v:
            set_value(out.tuple.items.add(), item)
    else:
        out.opaque = _type_name(v)


class _Exporter:
    def __init__(self):
        self.schemas = {}  # schema key -> str(schema)
        self.attributes = {}  # qualified name -> pb.Attribute
        self.frozen = []  # attributes that require grad (get_attr constants)
        self.submodules = {}  # qualified name -> pb.Graph
        self.hop_classes = {}  # HOP target -> its class chain (C.hop_classes)

    def run(self, gm, example_inputs):
        f = pb.File()
        f.format_version.major = C.FORMAT_MAJOR
        # 1.0: a file without a graph signature needs nothing newer
        # (_ep.add_signature raises it to 1.1).
        f.format_version.minor = 0
        f.producer = C.PRODUCER
        f.torch_version = str(torch.__version__)
        if example_inputs is not None:
            example_inputs = list(example_inputs)
        work = [("", gm, example_inputs, frozenset())]
        while work:
            qname, mod, inputs, ancestors = work.pop()
            g = f.graph if qname == "" else self.submodules.setdefault(qname, pb.Graph())
            children = self.graph(g, qname, mod, inputs)
            for child_qname, child in children:
                if id(child) in ancestors or child is mod:
                    raise ExportError("graph %s: submodule %r contains itself"
                                      % (_label(qname), child_qname))
                if child_qname in self.submodules:
                    continue
                self.submodules[child_qname] = pb.Graph()
                work.append((child_qname, child, None, ancestors | {id(mod)}))
        for q in sorted(self.submodules):
            s = f.submodules.add()
            s.qualified_name = q
            s.graph.CopyFrom(self.submodules[q])
        for q in sorted(self.attributes):
            f.attributes.add().CopyFrom(self.attributes[q])
        for k in sorted(self.schemas):
            s = f.schemas.add()
            s.name = k
            s.schema = self.schemas[k]
        for t in sorted(self.hop_classes):
            h = f.hop_classes.add()
            h.target = t
            h.classes.extend(self.hop_classes[t])
        if self.hop_classes:
            f.format_version.minor = 2  # 1.2: File.hop_classes
        ann = getattr(gm, "hopctl_annotations", None)
        if isinstance(ann, dict):
            for k, v in ann.items():
                a = f.annotations.add()
                a.key = str(k)
                a.value = str(v)
        return f

    # -- one graph -------------------------------------------------------

    def graph(self, g, qname, mod, example_inputs):
        nodes = list(mod.graph.nodes)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        if example_inputs is not None and len(example_inputs) != len(placeholders):
            raise ExportError("example_inputs has %d entries but the graph has %d placeholders"
                              % (len(example_inputs), len(placeholders)))
        real = {}
        if example_inputs is not None:
            real = {n: x for n, x in zip(placeholders, example_inputs)}
        storage_ids = self._storage_ids(placeholders, real)
        children = []
        for node in nodes:
            ctx = "graph %s: node %r" % (_label(qname), node.name)
            try:
                pn = g.nodes.add()
                self.node(pn, node, real, storage_ids)
                if node.op in ("get_attr", "call_module"):
                    child = self._reference(qname, mod, node)
                    if child is not None:
                        children.append(child)
            except ExportError as e:
                raise ExportError("%s: %s" % (ctx, e)) from None
            except (TypeError, ValueError, OverflowError, LookupError) as e:
                raise ExportError("%s: %s" % (ctx, e)) from e
        return children

    def _storage_ids(self, placeholders, real):
        ids, keys = {}, {}
        for n in placeholders:
            v = real.get(n, n.meta.get("val")) if real else n.meta.get("val")
            key = None
            if isinstance(v, TensorDesc):
                if v.storage_id is not None:
                    key = ("file", v.storage_id)
            elif isinstance(v, torch.Tensor):
                key = storage_key(v)
            if key is None:
                continue
            if key not in keys:
                keys[key] = len(keys)
            ids[n] = keys[key]
        return ids

    def _reference(self, qname, mod, node):
        target = node.target
        if not isinstance(target, str):
            raise ExportError("%s target must be a string, got %r" % (node.op, target))
        obj, ok = _fetch(mod, target)
        if not ok:
            raise ExportError("%s target %r does not exist on the module" % (node.op, target))
        full = target if not qname else qname + "." + target
        if isinstance(obj, torch.fx.GraphModule):
            return (full, obj)
        if node.op == "call_module":
            raise ExportError(
                "call_module target %r is a %s, not a GraphModule; the hopctl format carries "
                "only ATen-level graphs (trace with make_fx / torch.export / AOTAutograd)"
                % (target, _type_name(obj)))
        if isinstance(obj, torch.Tensor):
            if obj.requires_grad and full not in self.frozen:
                self.frozen.append(full)
            if full not in self.attributes:
                a = pb.Attribute()
                a.qualified_name = full
                a.meta.CopyFrom(tensor_meta_from_tensor(obj))
                data = _tensor_bytes(obj)
                if data:
                    a.data = data
                self.attributes[full] = a
            return None
        if node.op == "get_attr":
            # A constant lifted out of the graph (AOTAutograd's _tree_spec_constant0).
            if full not in self.attributes:
                a = pb.Attribute()
                a.qualified_name = full
                try:
                    self.arg(a.constant, obj)
                except ExportError as e:
                    raise ExportError("get_attr target %r: %s" % (target, e)) from None
                self.attributes[full] = a
            return None
        raise ExportError("%s target %r is a %s" % (node.op, target, _type_name(obj)))

    def node(self, pn, node, real, storage_ids):
        pn.name = node.name
        pn.op = _OPS[node.op]
        t = node.target
        if node.op == "call_function":
            pn.target = C.callable_name(t)
            self._note_op(t)
        elif node.op == "output":
            pn.target = "output"
        else:
            if not isinstance(t, str):
                raise ExportError("%s target must be a string, got %r" % (node.op, t))
            pn.target = t
        for a in node.args:
            self.arg(pn.args.add(), a)
        for k, v in node.kwargs.items():
            kw = pn.kwargs.add()
            kw.name = k
            self.arg(kw.value, v)
        meta = node.meta
        v, have = None, False
        if node in real and isinstance(real[node], torch.Tensor):
            v, have = real[node], True
        else:
            for key in ("val", "example_value", "tensor_meta"):
                if key in meta:
                    v, have = meta[key], True
                    break
            if not have and node in real:
                v, have = real[node], True
        if have:
            set_value(pn.val, v)
            if node in storage_ids and pn.val.WhichOneof("kind") == "tensor":
                pn.val.tensor.storage_id = storage_ids[node]
            elif pn.val.WhichOneof("kind") == "tensor":
                pn.val.tensor.ClearField("storage_id")
        self.meta(pn, node)

    def meta(self, pn, node):
        meta = node.meta
        m = pb.NodeMeta()
        st = meta.get("stack_trace")
        if isinstance(st, str) and st:
            m.stack_trace = st
        nms = meta.get("nn_module_stack")
        if isinstance(nms, dict):
            for key, val in nms.items():
                e = m.nn_module_stack.add()
                e.key = str(key)
                if isinstance(val, (tuple, list)) and len(val) >= 2:
                    e.path = str(val[0])
                    e.type = _describe_callable(val[1])
                else:  # older layouts: {key: type}
                    e.path = str(key)
                    e.type = _describe_callable(val)
        sfs = meta.get("source_fn_stack")
        if sfs is None and meta.get("source_fn") is not None:
            sfs = [meta["source_fn"]]
        if isinstance(sfs, (list, tuple)):
            for item in sfs:
                e = m.source_fn_stack.add()
                if isinstance(item, (tuple, list)) and len(item) >= 2:
                    e.key = str(item[0])
                    e.type = _describe_callable(item[1])
                    if len(item) >= 3 and item[2]:
                        e.path = str(item[2])
                else:
                    e.type = _describe_callable(item)
        seq = meta.get("seq_nr")
        if isinstance(seq, int) and not isinstance(seq, bool):
            m.seq_nr = seq
        fs = meta.get("fwd_source")
        if isinstance(fs, str) and fs:
            m.fwd_source = fs
        extra = []
        for k, v in meta.items():
            if k in _HANDLED_META or not isinstance(k, str):
                continue
            if isinstance(v, (str, bool, int, float)):
                extra.append((k, str(v)))
            elif C.is_op_overload(v) or C.is_hop(v):
                extra.append((k, C.callable_name(v)))
        for k, v in sorted(extra):
            a = m.extra.add()
            a.key = k
            a.value = v
        if m.ByteSize():
            pn.meta.CopyFrom(m)

    def _note_op(self, op):
        if C.is_hop(op):
            self.hop_classes.setdefault(C.callable_name(op), C.hop_classes(op))
        elif C.is_op_overload(op):
            key = C.schema_key(op)
            if key not in self.schemas:
                self.schemas[key] = str(op._schema)
        elif C.is_op_packet(op):
            # An overload packet (e.g. torch 1.13's aten.sym_size): every overload's schema.
            try:
                names = sorted(op.overloads())
            except Exception:
                names = []
            for name in names:
                try:
                    self._note_op(getattr(op, name))
                except Exception:
                    pass

    def arg(self, out, a):
        if isinstance(a, torch.fx.Node):
            out.node = a.name
        elif a is None:
            out.none.SetInParent()
        elif isinstance(a, bool):
            out.bool = a
        elif isinstance(a, int):
            if not _INT64_MIN <= a <= _INT64_MAX:
                raise ExportError("integer argument %d does not fit in int64" % a)
            out.int = a
        elif isinstance(a, float):
            out.float = a
        elif isinstance(a, complex):
            out.complex.real = a.real
            out.complex.imag = a.imag
        elif isinstance(a, str):
            out.str = a
        elif isinstance(a, torch.dtype):
            out.dtype = C.dtype_name(a)
        elif isinstance(a, torch.device):
            out.device = str(a)
        elif isinstance(a, torch.layout):
            out.layout = C.layout_name(a)
        elif isinstance(a, torch.memory_format):
            out.memory_format = C.memory_format_name(a)
        elif isinstance(a, SymDesc):
            out.sym.CopyFrom(a.to_proto())
        elif C.sym_kind(a) is not None:
            _set_sym(out.sym, a, C.sym_kind(a))
        elif isinstance(a, (list, tuple)):
            lst = out.list if isinstance(a, list) else out.tuple
            lst.SetInParent()
            for item in a:
                self.arg(lst.items.add(), item)
        elif isinstance(a, dict):
            out.dict.SetInParent()
            for k, v in a.items():
                if not isinstance(k, str):
                    raise ExportError("dict argument with non-string key %r" % (k,))
                e = out.dict.entries.add()
                e.name = k
                self.arg(e.value, v)
        elif C.is_op_overload(a) or C.is_hop(a) or C.is_op_packet(a):
            out.op = C.callable_name(a)
            self._note_op(a)
        elif isinstance(a, torch.Tensor):
            raise ExportError("tensor constant passed directly as an argument; lift it to a "
                              "get_attr node")
        elif isinstance(a, slice):
            out.slice.SetInParent()
            self.arg(out.slice.start, a.start)
            self.arg(out.slice.stop, a.stop)
            self.arg(out.slice.step, a.step)
        elif a is Ellipsis:
            out.ellipsis.SetInParent()
        elif callable(a):  # functions, operators and classes (a TreeSpec's node type)
            out.op = C.callable_name(a)
        else:
            try:
                name, fields = K.fields_of(a)
            except ValueError as e:
                raise ExportError(str(e)) from None
            out.constant.type = name
            for k, v in fields:
                e = out.constant.fields.add()
                e.name = k
                self.arg(e.value, v)


def _label(qname):
    return repr(qname) if qname else "'' (root)"

