"""Shared helpers: canonical spellings, target resolution, file encodings."""

import importlib
import operator
import os
import tempfile
import warnings

import torch

from ._proto.hopctl.v1 import graph_pb2 as pb

# One version for the package and the binary: the Makefile links this file's
# number into hopctl (internal/build.Version), setup.cfg reads it for the
# wheel, and _run checks that the binary it runs says the same.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "VERSION")) as _f:
    __version__ = _f.read().strip()

FORMAT_MAJOR = 1
FORMAT_MINOR = 2  # the newest minor this package reads; it writes 1.0, 1.1 for a signature, 1.2 for HOP classes
PRODUCER = "hopctl_torch " + __version__

# --------------------------------------------------------------------------
# Spellings of torch enum-like objects.


def _strip_torch(s):
    return s[len("torch."):] if s.startswith("torch.") else s


def dtype_name(dt):
    """torch.float32 -> "float32" (torch's canonical name, not an alias)."""
    return _strip_torch(str(dt))


def parse_dtype(name):
    dt = getattr(torch, name, None) if name else None
    if not isinstance(dt, torch.dtype):
        raise ValueError("unknown dtype %r" % (name,))
    return dt


def layout_name(layout):
    return _strip_torch(str(layout))


def parse_layout(name):
    lay = getattr(torch, name, None) if name else None
    if not isinstance(lay, torch.layout):
        raise ValueError("unknown layout %r" % (name,))
    return lay


def memory_format_name(mf):
    return _strip_torch(str(mf))


def parse_memory_format(name):
    mf = getattr(torch, name, None) if name else None
    if not isinstance(mf, torch.memory_format):
        raise ValueError("unknown memory_format %r" % (name,))
    return mf


def qscheme_name(qs):
    return _strip_torch(str(qs))


# The order matters: a tensor contiguous in several formats (e.g. [1, 3, 1, 1])
# reports the first one.
MEMORY_FORMATS = (
    ("contiguous_format", torch.contiguous_format),
    ("channels_last", torch.channels_last),
    ("channels_last_3d", torch.channels_last_3d),
)

# --------------------------------------------------------------------------
# Operator kinds.

_HOP_CLASSES = tuple(
    c for c in (getattr(torch._ops, "HigherOrderOperator", None),
                getattr(torch._ops, "PyOperator", None))  # torch 2.0 name
    if isinstance(c, type))


def is_op_overload(obj):
    return isinstance(obj, torch._ops.OpOverload)


def is_op_packet(obj):
    return isinstance(obj, torch._ops.OpOverloadPacket)


def is_hop(obj):
    return bool(_HOP_CLASSES) and isinstance(obj, _HOP_CLASSES) and not is_op_overload(obj)


def hop_classes(op):
    """The qualified names of a HOP's class and the classes it derives from,
    in method resolution order, up to HigherOrderOperator (File.hop_classes):
    a reader that does not know the HOP applies a base class's rules
    (torch._higher_order_ops.base_hop.BaseHOP)."""
    out = []
    for c in type(op).__mro__:
        out.append("%s.%s" % (c.__module__, c.__qualname__))
        if c in _HOP_CLASSES:
            break
    return out


def op_overload_name(op):
    """aten.add.Tensor; "default" for the default overload."""
    schema = op._schema
    ns, _, name = schema.name.partition("::")
    if not name:  # should not happen, but keep a usable spelling
        ns, name = getattr(op, "namespace", "aten"), ns
    overload = getattr(op, "_overloadname", None) or schema.overload_name or "default"
    return "%s.%s.%s" % (ns, name, overload)


def schema_key(op):
    """aten::add.Tensor (schema.name + "." + overload_name if any)."""
    s = op._schema
    return s.name + ("." + s.overload_name if s.overload_name else "")


def hop_name(op):
    name = getattr(op, "_name", None) or getattr(op, "__name__", None)
    if callable(name):
        name = name()
    if not name and hasattr(op, "name") and callable(op.name):
        name = op.name()
    if not isinstance(name, str) or not name:
        raise ValueError("cannot name higher-order operator %r" % (op,))
    return name


def _resolves_to(spelling, obj):
    try:
        return resolve_target(spelling) is obj
    except Exception:
        return False


def callable_name(fn):
    """Canonical spelling of a call_function target or an operator value."""
    if is_op_overload(fn):
        return op_overload_name(fn)
    if is_hop(fn):
        return "higher_order." + hop_name(fn)
    if is_op_packet(fn):
        qual = fn._qualified_op_name  # "aten::sym_size"
        return qual.replace("::", ".")
    mod = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None)
    name = getattr(fn, "__name__", None)
    if mod is None and isinstance(getattr(fn, "__self__", None), type(operator)):
        mod = fn.__self__.__name__
    if not mod or not (qual or name):
        raise ValueError("cannot spell callable %r (no __module__/__qualname__)" % (fn,))
    primary = "%s.%s" % (mod, qual or name)
    if qual and name and qual != name and not _resolves_to(primary, fn):
        # C builtins such as torch.relu report __qualname__
        # "_VariableFunctionsClass.relu"; prefer the public spelling.
        alt = "%s.%s" % (mod, name)
        if _resolves_to(alt, fn):
            return alt
    return primary


# --------------------------------------------------------------------------
# Resolving canonical spellings back to Python objects.

_resolve_cache = {}


def _lookup_op(parts):
    ns = getattr(torch.ops, parts[0])
    packet = getattr(ns, parts[1])
    if len(parts) == 2:
        return packet
    return getattr(packet, parts[2])


def resolve_target(spelling):
    """Inverse of callable_name. Raises LookupError when nothing matches."""
    hit = _resolve_cache.get(spelling)
    if hit is not None:
        return hit
    obj = _resolve_uncached(spelling)
    _resolve_cache[spelling] = obj
    return obj


def _resolve_uncached(spelling):
    parts = spelling.split(".")
    if not spelling or any(not p for p in parts):
        raise LookupError("malformed target %r" % (spelling,))
    if parts[0] == "higher_order":
        if len(parts) != 2:
            raise LookupError("malformed higher-order operator %r" % (spelling,))
        ns = getattr(torch.ops, "higher_order", None)
        try:
            op = getattr(ns, parts[1])
        except Exception:
            op = None
        if op is None:
            raise LookupError(
                "higher-order operator %r is not available in torch %s"
                % (spelling, torch.__version__))
        return op
    if len(parts) == 3:
        try:
            op = _lookup_op(parts)
            if is_op_overload(op):
                return op
        except Exception:
            pass
    # A Python callable: the longest importable module prefix, then attributes.
    for i in range(len(parts) - 1, 0, -1):
        modname = ".".join(parts[:i])
        try:
            obj = importlib.import_module(modname)
        except Exception:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
            return obj
        except AttributeError:
            continue
    if len(parts) == 2:
        try:
            op = _lookup_op(parts)
            if is_op_packet(op):
                return op
        except Exception:
            pass
    raise LookupError("unknown target %r" % (spelling,))


# --------------------------------------------------------------------------
# Symbolic values (torch 2.x SymInt/SymFloat/SymBool, torch 1.13 SymIntNode).

_SYM_KINDS = {
    "SymInt": pb.SYM_INT, "SymIntNode": pb.SYM_INT, "PySymInt": pb.SYM_INT,
    "SymFloat": pb.SYM_FLOAT, "SymFloatNode": pb.SYM_FLOAT, "PySymFloat": pb.SYM_FLOAT,
    "SymBool": pb.SYM_BOOL, "SymBoolNode": pb.SYM_BOOL,
}


def sym_kind(x):
    """SymKind of a symbolic scalar, or None when x is not symbolic."""
    for cls in type(x).__mro__:
        k = _SYM_KINDS.get(cls.__name__)
        if k is not None:
            return k
    return None


def _sym_node(x):
    if hasattr(x, "get_pyobj"):  # torch 1.13 SymIntNode
        try:
            return x.get_pyobj()
        except Exception:
            return None
    return getattr(x, "node", None)


def sym_constant(x):
    """The Python value of a symbolic scalar that is actually a constant, else None."""
    node = _sym_node(x)
    if node is None:
        return None
    for meth in ("maybe_as_int", "maybe_as_float", "maybe_as_bool"):
        f = getattr(node, meth, None)
        if f is not None:
            try:
                v = f()
            except Exception:
                v = None
            if v is not None:
                return v
    expr = getattr(node, "expr", None)
    if expr is not None and getattr(expr, "is_number", False):
        try:
            if getattr(expr, "is_Boolean", False):
                return bool(expr)
            if getattr(expr, "is_Integer", False):
                return int(expr)
            return float(expr)
        except Exception:
            return None
    return None


def sym_expr(x):
    """(expression string, hint string or None) of a symbolic scalar."""
    node = _sym_node(x)
    expr = getattr(node, "expr", None) if node is not None else None
    text = str(expr) if expr is not None else str(x)
    hint = None
    if node is not None:
        h = getattr(node, "hint", None)
        if h is None:
            h = getattr(node, "_hint", None)
        if h is None and expr is not None:
            shape_env = getattr(node, "shape_env", None)
            size_hint = getattr(shape_env, "size_hint", None)
            if size_hint is not None:
                try:
                    h = size_hint(expr)
                except Exception:
                    h = None
        if h is not None and not callable(h):
            hint = str(h)
    return text, hint


# --------------------------------------------------------------------------
# Encodings.

BINARY, JSON, TEXT = "binary", "json", "text"
_EXTENSIONS = {
    ".pb": BINARY, ".bin": BINARY,
    ".json": JSON,
    ".pbtxt": TEXT, ".txtpb": TEXT, ".textproto": TEXT, ".textpb": TEXT,
}

TEXT_HEADER = "# proto-file: hopctl/v1/graph.proto\n# proto-message: hopctl.v1.File\n"


def encoding_for_path(path):
    return _EXTENSIONS.get(os.path.splitext(str(path))[1].lower())


def serialize(msg, encoding):
    from google.protobuf import json_format, text_format
    if encoding == BINARY:
        return msg.SerializeToString(deterministic=True)
    if encoding == JSON:
        text = json_format.MessageToJson(msg, preserving_proto_field_name=True, indent=2)
        return (text + "\n").encode("utf-8")
    if encoding == TEXT:
        return (TEXT_HEADER + text_format.MessageToString(msg, as_utf8=True)).encode("utf-8")
    raise ValueError("unknown encoding %r" % (encoding,))


def write_atomic(path, data):
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = os.stat(path).st_mode & 0o777
        except OSError:
            mode = 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _parse_binary(data):
    msg = pb.File()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        n = msg.ParseFromString(data)
    for w in caught:  # the pure-Python decoder warns instead of failing on stray end-group tags
        raise ValueError(str(w.message))
    if n is not None and n != len(data):
        raise ValueError("only %d of %d bytes parsed" % (n, len(data)))
    return msg


def _parse_json(data, lenient):
    from google.protobuf import json_format
    msg = pb.File()
    json_format.Parse(data.decode("utf-8"), msg, ignore_unknown_fields=lenient)
    return msg


def _parse_text(data, lenient):
    from google.protobuf import text_format
    msg = pb.File()
    try:
        text_format.Parse(data.decode("utf-8"), msg, allow_unknown_field=lenient)
    except TypeError:  # very old protobuf without allow_unknown_field
        text_format.Parse(data.decode("utf-8"), msg)
    return msg


def _parse_textual(data, encoding):
    """Strict parse; on failure accept unknown fields only from a newer minor version."""
    parse = _parse_json if encoding == JSON else _parse_text
    try:
        return parse(data, False)
    except Exception as strict_err:
        try:
            msg = parse(data, True)
        except Exception:
            raise strict_err
        if msg.format_version.major == FORMAT_MAJOR and msg.format_version.minor > FORMAT_MINOR:
            return msg
        raise strict_err


def sniff(data):
    stripped = data.lstrip()
    if stripped[:1] == b"{":
        return JSON
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return BINARY
    first = text.lstrip()[:1]
    if first == "#" or first.isalpha():
        # Could still be binary that happens to be valid UTF-8; try it.
        try:
            msg = _parse_binary(data)
            if msg.HasField("format_version"):
                return BINARY
        except Exception:
            pass
        return TEXT
    return BINARY


_ENCODING_NAMES = {BINARY: "binary protobuf", JSON: "protobuf JSON", TEXT: "protobuf text format"}


def read_file(path):
    """Parse a hopctl File from path in any encoding. Errors are ValueErrors naming the file."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ValueError("%s: cannot read: %s" % (path, e.strerror or e)) from e
    encoding = encoding_for_path(path) or sniff(data)
    try:
        if encoding == BINARY:
            msg = _parse_binary(data)
        else:
            msg = _parse_textual(data, encoding)
    except Exception as e:
        raise ValueError("%s: not a valid hopctl file (%s): %s"
                         % (path, _ENCODING_NAMES[encoding], _short(e))) from e
    check_version(msg, path)
    return msg


def _short(e):
    s = str(e).strip() or type(e).__name__
    return s if len(s) < 400 else s[:400] + "..."


def check_version(msg, path):
    if not msg.HasField("format_version") or msg.format_version.major == 0:
        raise ValueError("%s: not a hopctl graph file: format_version is missing" % (path,))
    v = msg.format_version
    if v.major > FORMAT_MAJOR:
        raise ValueError(
            "%s: format version %d.%d is newer than this reader supports (%d.x); "
            "upgrade hopctl_torch (written by %r)"
            % (path, v.major, v.minor, FORMAT_MAJOR, msg.producer or "unknown producer"))
