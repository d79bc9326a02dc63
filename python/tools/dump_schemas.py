#!/usr/bin/env python3
"""Dump the operator schemas registered in the running torch for hopctl.

Run with the Python that has torch (on Debian: /usr/bin/python3, torch 1.13),
and for torch 2.14's table in its chroot:

    /usr/bin/python3 python/tools/dump_schemas.py
    scripts/torch.sh 2.14 -- python3 python/tools/dump_schemas.py --table pkg/opschema/aten_schemas_2.14.txt

It writes three files, all deterministic (sorted, deduplicated, sorted keys):

* ``pkg/opschema/aten_schemas.txt`` -- one ``str(schema)`` per line, sorted,
  after a ``#`` header line naming the torch version. hopctl embeds this file
  (go:embed) as its built-in schema table.
* ``testdata/schemas/torch-<version>-alias.json`` -- for every schema, what
  torch's own parser reports for every argument and return: name, type, fixed
  list size N, kwarg_only, is_out, default presence, and the alias info
  (before set, after set, is_write). Fields that are None or false are left
  out. One schema per line. The Go parity test parses every schema string
  with hopctl's parser and compares.
* ``testdata/schemas/torch-<version>-edge-alias.json`` -- the same for the
  hand-written corner cases in EDGE_ACCEPTED (torch's printed form under
  "printed"), plus the EDGE_REJECTED strings torch refuses, with its error.
  Torch 1.x only: the corner cases pin torch 1.13's parser, which hopctl's
  follows (torch 2.14's refuses some, e.g. ``Dimname`` in a build without
  named tensors); for 2.x the registered schemas are the parity oracle.

What torch 1.13's Python API exposes (and so what the JSON records):
``Argument.{name, type, N, kwarg_only, is_out, alias_info, has_default_value(),
default_value}`` and ``_AliasInfo.{before_set, after_set, is_write}``.
``Argument.is_write`` and ``_AliasInfo.contained_types`` do not exist in 1.13;
``is_write`` is recorded inside ``alias_info`` only (torch's later
``Argument.is_write`` is ``alias_info is not None and alias_info.is_write``),
and contained (element) alias info is not recorded.

Every schema string is also re-parsed with ``torch._C.parse_schema`` and the
result compared with the registered schema, so the table is known to
round-trip through torch's own printer and parser; a mismatch aborts.
"""

import argparse
import json
import os
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def alias_json(ai):
    if ai is None:
        return None
    return {
        "after_set": sorted(ai.after_set),
        "before_set": sorted(ai.before_set),
        "is_write": bool(ai.is_write),
    }


def arg_json(a):
    """Describes one argument or return; false/None fields are left out."""
    d = {"name": a.name, "type": str(a.type)}
    if a.N is not None:
        d["N"] = a.N
    if a.alias_info is not None:
        d["alias_info"] = alias_json(a.alias_info)
    if a.has_default_value():
        d["default"] = repr(a.default_value)
    if a.kwarg_only:
        d["kwarg_only"] = True
    if a.is_out:
        d["is_out"] = True
    return d


def schema_json(s):
    return {
        "arguments": [arg_json(a) for a in s.arguments],
        "is_mutable": bool(s.is_mutable),
        "name": s.name,
        "overload": s.overload_name,
        "returns": [arg_json(r) for r in s.returns],
        "schema": str(s),
    }


# Hand-written schemas that exercise corners of the grammar. torch's parser
# is the oracle: the ones it accepts go to torch-<version>-edge-alias.json with
# what it reports, like the registered schemas; the ones it rejects are
# recorded with its error, and hopctl's parser must reject them too.
# (Some inputs are left out on purpose: torch 1.13 segfaults on a positional
# argument without default after one with a default, and it rejects -inf,
# Await(T) and some default/type mismatches that newer torch or hopctl accept.)
EDGE_ACCEPTED = [
    "foo(Tensor(a!)[2] x) -> ()",
    "foo(Tensor(a)[](b) x) -> ()",
    "foo(Tensor(a!)[](b) x) -> ()",
    "foo(Tensor(a!)[](b!) x) -> ()",
    "foo(Tensor(a!)[][] x) -> ()",
    "foo(Tensor[](a)[](b) x) -> ()",
    "foo(Tensor(a)[][] x) -> ()",
    "foo(Tensor(a)[2](b) x) -> ()",
    "foo(Tensor(a)[2]? x) -> ()",
    "foo(Tensor! x) -> Tensor!",
    "foo(Tensor! x, Tensor! y) -> ()",
    "foo(Tensor!? x) -> ()",
    "foo(Tensor[]! x) -> ()",
    "foo(Tensor(a!)[]? x) -> ()",
    "foo(Tensor(a)? x) -> ()",
    "foo(Tensor?[] x) -> ()",
    "foo(Tensor(a)?[] x) -> ()",
    "foo(int[]? x=None) -> ()",
    "foo(int[2] x=1) -> ()",
    "foo(int[2]? x=None) -> ()",
    "foo(int[0] x) -> ()",
    "foo(Tensor(a|b) x) -> ()",
    "foo(Tensor(a|*) x) -> ()",
    "foo(Tensor(*|*) x) -> ()",
    "foo(Tensor(*) x) -> ()",
    "foo(Tensor(* -> *) x) -> ()",
    "foo(Tensor(a -> a|*) x) -> ()",
    "foo(Tensor(a! -> a|b) x) -> ()",
    "foo(Tensor(a!->*) x) -> ()",
    "foo(Tensor( a ! ) x) -> ()",
    "foo(Tensor(a -> *) x) -> ()",
    "foo(Tensor(a|a) x) -> ()",
    "foo(Tensor(A) x) -> ()",
    "foo(Tensor(a_1) x) -> ()",
    "foo(Any(a!) x) -> ()",
    "foo(Scalar(a) x) -> ()",
    "foo(t(a)? x) -> ()",
    "foo(Union(Tensor, int)(a) x) -> ()",
    "foo(Union(int, Tensor) x) -> ()",
    "foo((int, Tensor(a)) x) -> ()",
    "foo(Future(Tensor(a)) x) -> ()",
    "foo(RRef(int) x) -> ()",
    "foo(Dict(str, Tensor(a))(b!) x) -> ()",
    "foo(Tensor x) -> (Tensor a, Tensor b)",
    "foo(Tensor x) -> (Tensor)",
    "foo(Tensor x) -> Tensor y",
    "foo(Tensor x) -> (Tensor, ...)",
    "foo(Tensor x, ...) -> ...",
    "foo(Tensor x) -> ((int, int))",
    "foo(Tensor x) -> Tensor(a)[](b)",
    "foo(Tensor x) -> Tensor[2]",
    "foo(Tensor x) -> int[2] y",
    "foo(Tensor x) -> (Tensor(a!) b, Tensor c)",
    "foo(Tensor x) -> Tensor!",
    "foo(Tensor x, *, *, Tensor y) -> ()",
    "foo(*) -> ()",
    "foo(Tensor x, int y=1, *, float z) -> ()",
    "foo(Tensor x, int y=1, int[] z) -> ()",
    "foo(Tensor(a) x=None) -> ()",
    "foo(Tensor x=None) -> ()",
    "foo(int x=long) -> ()",
    "foo(MemoryFormat x=contiguous_format) -> ()",
    "foo(Layout x=strided) -> ()",
    "foo(int x=Mean) -> ()",
    "foo(ScalarType x=float) -> ()",
    "foo(str x='a') -> ()",
    'foo(str x="a\\nb") -> ()',
    'foo(str x="\\"\\\'\\\\") -> ()',
    'foo(Device x="cpu") -> ()',
    "foo(int[] x=[0,1]) -> ()",
    "foo(float[] x=[0.5,1]) -> ()",
    "foo(bool[3] x=[True,False,True]) -> ()",
    "foo(int[] x=[]) -> ()",
    "foo(int[2] x=[1]) -> ()",
    "foo(int[] x=[-1, -2]) -> ()",
    "foo(Scalar x=1e-05) -> ()",
    "foo(float x=.5) -> ()",
    "foo(float x=5.) -> ()",
    "foo(float x=1E5) -> ()",
    "foo(float x=-1.5e+3) -> ()",
    "foo(complex x=1j) -> ()",
    "foo(Scalar x=True) -> ()",
    "foo(int x=1.5) -> ()",
    "foo(bool x=1) -> ()",
    "foo(Stream s) -> ()",
    "foo(NoneType x) -> ()",
    "foo(None x) -> ()",
    "foo(Dimname x) -> ()",
    "foo(SymInt[] x) -> ()",
    'foo(str? x="") -> ()',
    "ns::foo.bar(Tensor x) -> ()",
    "foo(Tensor x)->Tensor",
    "foo(Tensor x) -> Tensor # comment",
    "foo(Tensor a) -> Tensor(a)",
    "foo(Tensor x) -> Tensor(a!)",
    "foo(Tensor(a!) x) -> Tensor(a!)[]",
    "foo(__torch__.torch.classes.quantized.Conv2dPackedParamsBase x) -> ()",
]

EDGE_REJECTED = [
    "foo(Tensor?(a) x) -> ()",
    "foo(Tensor(a|*|b) x) -> ()",
    "foo(Tensor(*|a) x) -> ()",
    "foo(Tensor(a -> *|b) x) -> ()",
    "foo(Tensor(a) -> b) x) -> ()",
    "foo(Tensor(a -> ) x) -> ()",
    "foo(Tensor(a -> b!) x) -> ()",
    "foo(..., Tensor x) -> ()",
    "foo(Tensor x)",
    "foo",
    "foo(Tensor) -> ()",
    "foo(Tensor x,) -> ()",
    "foo(Tensor x) -> (Tensor x=1)",
    "foo(Tensor(a! x) -> ()",
    "foo(Tensor(!) x) -> ()",
    "foo(Tensor() x) -> ()",
    "foo(Tensor(a)! x) -> ()",
    "foo(Tensor(a)(b) x) -> ()",
    "foo(Tensor!(a) x) -> ()",
    "foo(Foo x) -> ()",
    "foo(Tensor(a.b) x) -> ()",
    "foo(int[-1] x) -> ()",
    "foo(Tensor[2][] x) -> ()",
    "aten::foo..bar(Tensor x) -> ()",
    "aten:foo(Tensor x) -> ()",
    "foo(Tensor x) -> Tensor\nbar(Tensor y) -> Tensor",
    "foo(Tensor x) -> ()()",
    "foo(Tensor(a) x) -> Tensor(a) y, int z",
    "foo(int x=+1) -> ()",
    "foo(int x=1_000) -> ()",
    "foo(int x=--1) -> ()",
    "foo(float x=1e) -> ()",
    'foo(str s="a" "b") -> ()',
    "foo(str s='it''s') -> ()",
]


def edge_json(version):
    accepted = []
    for text in EDGE_ACCEPTED:
        rec = schema_json(torch._C.parse_schema(text))
        rec["printed"] = rec["schema"]
        rec["schema"] = text
        accepted.append(rec)
    rejected = []
    for text in EDGE_REJECTED:
        try:
            torch._C.parse_schema(text)
        except RuntimeError as e:
            msg = str(e).strip().splitlines()
            rejected.append({"error": msg[0] if msg else "", "schema": text})
            continue
        sys.exit("edge case expected to be rejected was accepted: %r" % text)
    return accepted, rejected


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", default=os.path.join(REPO, "pkg", "opschema", "aten_schemas.txt"),
                    help="where to write the schema table (default: %(default)s)")
    ap.add_argument("--json-dir", default=os.path.join(REPO, "testdata", "schemas"),
                    help="directory for torch-<version>-alias.json (default: %(default)s)")
    args = ap.parse_args()

    version = torch.__version__
    schemas = torch._C._jit_get_all_schemas()
    by_text = {}
    for s in schemas:
        text = str(s)
        if "\n" in text:
            sys.exit("schema with a newline cannot be stored one per line: %r" % text)
        rec = schema_json(s)
        if text in by_text and by_text[text] != rec:
            sys.exit("two different schemas print as %r" % text)
        by_text[text] = rec
        # The printed order of a multi-set annotation (Tensor(b|a)) follows
        # torch's hash-set order, so compare everything but the text.
        reparsed = schema_json(torch._C.parse_schema(text))
        reparsed["schema"] = text
        if reparsed != rec:
            sys.exit("schema does not round-trip through torch's parser: %r" % text)
    texts = sorted(by_text)

    with open(args.table, "w", encoding="utf-8", newline="\n") as f:
        f.write("# torch %s: %d schemas from torch._C._jit_get_all_schemas(); "
                "generated by python/tools/dump_schemas.py, do not edit\n" % (version, len(texts)))
        for t in texts:
            f.write(t + "\n")

    os.makedirs(args.json_dir, exist_ok=True)
    out = os.path.join(args.json_dir, "torch-%s-alias.json" % version)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        # One schema per line: diff-friendly and still plain JSON.
        f.write('{"count": %d, "schemas": [\n' % len(texts))
        for i, t in enumerate(texts):
            sep = "," if i + 1 < len(texts) else ""
            f.write(json.dumps(by_text[t], sort_keys=True, separators=(",", ":")) + sep + "\n")
        f.write('], "torch_version": %s}\n' % json.dumps(version))

    if not version.startswith("1."):
        print("torch %s: %d schemas (%d registered) -> %s, %s (no edge cases: torch 1.x only)"
              % (version, len(texts), len(schemas), os.path.relpath(args.table, REPO),
                 os.path.relpath(out, REPO)))
        return
    accepted, rejected = edge_json(version)
    edge = os.path.join(args.json_dir, "torch-%s-edge-alias.json" % version)
    with open(edge, "w", encoding="utf-8", newline="\n") as f:
        f.write('{"count": %d, "rejected": [\n' % len(accepted))
        for i, r in enumerate(rejected):
            sep = "," if i + 1 < len(rejected) else ""
            f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + sep + "\n")
        f.write('], "schemas": [\n')
        for i, r in enumerate(accepted):
            sep = "," if i + 1 < len(accepted) else ""
            f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + sep + "\n")
        f.write('], "torch_version": %s}\n' % json.dumps(version))

    print("torch %s: %d schemas (%d registered) -> %s, %s"
          % (version, len(texts), len(schemas), os.path.relpath(args.table, REPO), os.path.relpath(out, REPO)))


if __name__ == "__main__":
    main()
