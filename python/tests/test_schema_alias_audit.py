"""Audit of the schema table's alias annotations against torch's runtime.

Every ATen op that torch can call with a tensor `self` alone (all other
arguments defaulted), that does not write, and whose returns carry no alias
annotation, is run on a real tensor; a return sharing self's storage is a
schema lie and must be in pkg/opschema/corrections.go's aliasCorrections.
The unsafe_ split ops (which need a size) are run explicitly.

    PYTHONPATH=python /usr/bin/python3 -m unittest python/tests/test_schema_alias_audit.py
"""

import os
import re
import unittest
import warnings

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def corrected_ops():
    with open(os.path.join(REPO, "pkg", "opschema", "corrections.go")) as f:
        text = f.read()
    block = text[text.index("var aliasCorrections"):]
    block = block[:block.index("\n}\n")]
    out = set()
    for op, ov in re.findall(r'Op: "aten::(\w+)"(?:, Overload: "(\w+)")?', block):
        out.add(op + ("." + ov if ov else ""))
    return out


def storage(t):
    return t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr()


def leaves(out):
    if isinstance(out, (list, tuple)):
        return [x for o in out for x in leaves(o)]
    return [out] if isinstance(out, torch.Tensor) else []


class SchemaAliasAudit(unittest.TestCase):
    def test_unannotated_returns_do_not_alias(self):
        warnings.simplefilter("ignore")
        corrected = corrected_ops()
        self.assertTrue({"unsafe_split.Tensor", "unsafe_chunk", "unsafe_split_with_sizes"} <= corrected)
        found, ran = set(), 0
        for s in torch._C._jit_get_all_schemas():
            if not s.name.startswith("aten::") or not s.arguments or not s.returns:
                continue
            a0 = s.arguments[0]
            if a0.name != "self" or str(a0.type) != "Tensor" or a0.alias_info is not None:
                continue
            if any(a.alias_info is not None and a.alias_info.is_write for a in s.arguments):
                continue
            if any(r.alias_info is not None for r in s.returns):
                continue
            if any(a.default_value is None and not a.kwarg_only and i > 0 for i, a in enumerate(s.arguments)
                   if not str(a.type).startswith("Optional")) or any(
                    a.kwarg_only and a.default_value is None and not str(a.type).startswith("Optional") for a in s.arguments):
                continue
            name = s.name[len("aten::"):]
            if name.startswith("_") or "cuda" in name or "mkldnn" in name or "quantize" in name:
                continue
            packet = getattr(torch.ops.aten, name, None)
            op = getattr(packet, s.overload_name or "default", None) if packet is not None else None
            if op is None:
                continue
            x = torch.randn(4, 6)
            try:
                out = op(x)
            except Exception:
                continue
            ran += 1
            key = name + ("." + s.overload_name if s.overload_name else "")
            outs = [o for o in leaves(out) if o.layout == torch.strided and o.numel()]
            if any(storage(o) == storage(x) for o in outs):
                found.add(key)
        for key, call in [("unsafe_split.Tensor", lambda x: torch.ops.aten.unsafe_split.Tensor(x, 2, 1)),
                          ("unsafe_chunk", lambda x: torch.ops.aten.unsafe_chunk.default(x, 3, 1)),
                          ("unsafe_split_with_sizes", lambda x: torch.ops.aten.unsafe_split_with_sizes.default(x, [2, 4], 1))]:
            x = torch.randn(4, 6)
            if all(storage(o) == storage(x) for o in leaves(call(x))):
                found.add(key)
            ran += 1
        self.assertGreater(ran, 100, "the audit ran too few ops to mean anything")
        self.assertEqual(found - corrected, set(), "ops whose unannotated returns alias self at runtime")
        self.assertEqual(corrected - found, set(), "corrections torch's runtime does not confirm")


if __name__ == "__main__":
    unittest.main()
