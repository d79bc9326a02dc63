"""Python objects torch 2.x puts in graphs as constant arguments, and how a
hopctl file carries them (``Arg.slice``, ``Arg.ellipsis``, ``Arg.constant``).

A ``Constant`` is a type name and named fields, each an ``Arg``. Writing and
rebuilding are the two halves of one table below, so what ``export`` writes
``load`` rebuilds into an equal object, and exporting that again gives the same
bytes:

* ``torch.utils._pytree.TreeSpec`` (and ``LeafSpec``): fields ``type`` (the
  node type as an operator value, e.g. ``builtins.tuple``; None for a leaf),
  ``context`` and ``children`` (a list of TreeSpecs). auto_functionalized_v2
  passes a HOP's schema as the TreeSpec of a ``SchemaHolder`` (its
  ``_op_schema`` keyword, torch/_higher_order_ops/auto_functionalize.py).
* ``torch._C.FunctionSchema``: field ``schema``, the text ``str()`` prints,
  parsed back with ``torch._C.parse_schema``; its subclass ``HopSchema``
  (torch/_higher_order_ops/schema.py) adds ``is_vararg``, ``is_varret`` and
  ``tree_spec``.
* dataclasses (pytree's ``ConstantNode``, ...): their fields, rebuilt by
  calling the class with them.
* any other class: its instance attributes (``vars(obj)``) in their order,
  rebuilt with ``cls.__new__`` and those attributes (``SchemaHolder``).

Types are named ``module.qualname`` and found again by importing the module, as
call targets are. An object none of these describe (no ``__dict__``, not a
dataclass) is refused with its type name.
"""

import dataclasses

import torch

from . import _common as C

TREESPEC = "torch.utils._pytree.TreeSpec"
FUNCTION_SCHEMA = "torch._C.FunctionSchema"


def type_name(cls):
    return "%s.%s" % (cls.__module__, cls.__qualname__)


def _pytree():
    import torch.utils._pytree as pytree
    return pytree


def _is_treespec(obj):
    cls = getattr(_pytree(), "TreeSpec", None)
    return isinstance(cls, type) and isinstance(obj, cls)


def _is_function_schema(obj):
    return isinstance(obj, torch._C.FunctionSchema)


def fields_of(obj):
    """(type name, [(field name, value)]) describing obj, or raise ValueError."""
    if _is_treespec(obj):
        leaf = obj.type is None
        # torch 2.14 keeps _context/_children; torch 2.6 context/children_specs.
        context = obj._context if hasattr(obj, "_context") else obj.context
        children = obj._children if hasattr(obj, "_children") else obj.children_specs
        return TREESPEC, [
            ("type", None if leaf else obj.type),
            ("context", None if leaf else context),
            ("children", [] if leaf else list(children)),
        ]
    if _is_function_schema(obj):
        name = FUNCTION_SCHEMA if type(obj) is torch._C.FunctionSchema else type_name(type(obj))
        fields = [("schema", str(obj))]
        if type(obj) is not torch._C.FunctionSchema:  # HopSchema
            fields += [("is_vararg", bool(obj.is_vararg)), ("is_varret", bool(obj.is_varret)),
                       ("tree_spec", getattr(obj, "tree_spec", None))]
        return name, fields
    cls = type(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return type_name(cls), [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict) and not callable(obj) and cls.__module__ != "builtins":
        return type_name(cls), list(d.items())
    raise ValueError("unsupported argument of type %s: %r" % (type_name(cls), obj))


def rebuild(type_spelling, fields):
    """The object fields_of described. fields: [(name, rebuilt value)]."""
    f = dict(fields)
    if type_spelling == TREESPEC:
        pytree = _pytree()
        if f.get("type") is None:
            leaf = getattr(pytree, "treespec_leaf", None)
            return leaf() if leaf is not None else pytree.LeafSpec()
        return pytree.TreeSpec(f["type"], f.get("context"), list(f.get("children") or []))
    try:
        cls = C.resolve_target(type_spelling)
    except LookupError:
        raise ValueError("constant of unknown type %r" % type_spelling) from None
    if not isinstance(cls, type):
        raise ValueError("constant type %r is not a class" % type_spelling)
    if issubclass(cls, torch._C.FunctionSchema):
        parsed = torch._C.parse_schema(f["schema"])
        if cls is torch._C.FunctionSchema:
            return parsed
        return cls(parsed.name, parsed.overload_name, parsed.arguments, parsed.returns,
                   f.get("is_vararg", False), f.get("is_varret", False), f.get("tree_spec"))
    if dataclasses.is_dataclass(cls):
        return cls(**f)
    obj = cls.__new__(cls)
    obj.__dict__.update(f)
    return obj
