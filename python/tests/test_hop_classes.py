"""The bridge records the Python classes of the HOPs a graph calls
(File.hop_classes, format 1.2), so hopctl can apply a base class's rules to
a HOP it does not know: a BaseHOP subclass defined by the program, as
PyTorch's test/dynamo/test_base_hop.py defines one.

* a graph calling no HOP records none and stays format 1.0 (torch 1.13 too);
* cond records its class chain up to HigherOrderOperator;
* a BaseHOP subclass records torch._higher_order_ops.base_hop.BaseHOP, at
  the make_fx level and in the graph Dynamo hands its backend; the files
  load back and export to the same bytes;
* hopctl (HOPCTL) analyses them by BaseHOP's rules: a write in the
  subgraph reaches the caller's input at the make_fx level, which torch
  accepts, and is Dynamo's refusal at the Dynamo level, the words
  torch.compile raises without test_base_hop.py's patch.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
if PYROOT not in sys.path:
    sys.path.insert(0, PYROOT)

import hopctl_torch  # noqa: E402
from hopctl_torch._proto.hopctl.v1 import graph_pb2 as pb  # noqa: E402

BASE_HOP = "torch._higher_order_ops.base_hop.BaseHOP"
HAS_COND = hasattr(getattr(torch, "ops", None), "higher_order") and hasattr(torch, "cond")
HAS_BASE_HOP = HAS_COND and hasattr(getattr(torch, "_higher_order_ops", None), "BaseHOP")


def _make_fx(fn, *inputs):
    from torch.fx.experimental.proxy_tensor import make_fx
    return make_fx(fn, tracing_mode="fake")(*inputs)


def _classes(msg):
    return {h.target: list(h.classes) for h in msg.hop_classes}


_HOP = None


def _base_hop():
    """One BaseHOP subclass per process (a HOP name registers once)."""
    global _HOP
    if _HOP is None:
        class ClassesTestHOP(torch._higher_order_ops.BaseHOP):
            def __init__(self):
                super().__init__("classes_test_hop")

            def __call__(self, subgraph, *operands, scheme):
                return super().__call__(subgraph, *operands, scheme=scheme)
        _HOP = ClassesTestHOP()
    return _HOP


def _body(x):
    x.add_(1)
    return x.sin()


class HOPClasses(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def _roundtrip(self, gm, name, grad_enabled=None):
        """Exports gm, loads it back, exports again: the same bytes."""
        path = os.path.join(self.tmp.name, name + ".pb")
        hopctl_torch.export(gm, path, grad_enabled=grad_enabled)
        again = os.path.join(self.tmp.name, name + "_again.pb")
        hopctl_torch.export(hopctl_torch.load(path), again)
        with open(path, "rb") as f, open(again, "rb") as g:
            self.assertEqual(f.read(), g.read(), "re-export of %s differs" % name)
        msg = pb.File()
        with open(path, "rb") as f:
            msg.ParseFromString(f.read())
        return path, msg

    def test_no_hop_no_record(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        msg = hopctl_torch.to_proto(gm)
        self.assertEqual(len(msg.hop_classes), 0)
        self.assertEqual((msg.format_version.major, msg.format_version.minor), (1, 0))

    @unittest.skipUnless(HAS_COND, "torch %s has no torch.cond" % torch.__version__)
    def test_cond_records_its_class(self):
        gm = _make_fx(lambda x: torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,)), torch.randn(3))
        _, msg = self._roundtrip(gm, "cond")
        self.assertEqual(msg.format_version.minor, 2)
        classes = _classes(msg)
        self.assertEqual(list(classes), ["higher_order.cond"])
        chain = classes["higher_order.cond"]
        self.assertEqual(chain[0], "%s.%s" % (type(torch.ops.higher_order.cond).__module__,
                                              type(torch.ops.higher_order.cond).__qualname__))
        self.assertEqual(chain[-1], "torch._ops.HigherOrderOperator")
        self.assertNotIn(BASE_HOP, chain)

    @unittest.skipUnless(HAS_BASE_HOP, "torch %s has no BaseHOP" % torch.__version__)
    def test_base_hop_subclass(self):
        from torch._higher_order_ops.base_hop import FunctionWithNoFreeVars
        hop = _base_hop()

        def program(x):
            return hop(FunctionWithNoFreeVars(_body), x, scheme="nf4")
        gm = _make_fx(program, torch.randn(3, 3))
        aten, msg = self._roundtrip(gm, "make_fx")
        chain = _classes(msg)["higher_order.classes_test_hop"]
        self.assertIn(BASE_HOP, chain)
        self.assertTrue(chain[0].endswith("ClassesTestHOP"), chain)

        def compiled(x):
            return hop(_body, x, scheme="nf4")
        torch._dynamo.reset()
        with self.assertRaisesRegex(Exception, "Encountered input mutation during higher order op tracing"):
            torch.compile(compiled, backend="eager", fullgraph=True)(torch.randn(3, 3))
        # The graph Dynamo writes without its check (test_base_hop.py's patch).
        got = []

        def backend(g, _inputs):
            got.append(g)
            return g.forward
        torch._dynamo.reset()
        var = "torch._dynamo.variables.higher_order_ops.BaseHOPVariable.supports_input_mutation"
        with mock.patch(var, True):
            torch.compile(compiled, backend=backend, fullgraph=True)(torch.randn(3, 3))
        dynamo, msg = self._roundtrip(got[0], "dynamo", grad_enabled=True)
        self.assertIn(BASE_HOP, _classes(msg)["higher_order.classes_test_hop"])

        exe = os.environ.get("HOPCTL")
        if not exe:
            self.skipTest("HOPCTL is not set: the Go side is not checked")
        r = subprocess.run([exe, "analyze", "--format", "json", aten, dynamo], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        files = {os.path.basename(f["path"]): f for f in json.loads(r.stdout)["files"]}
        for name, want in (("make_fx.pb", []), ("dynamo.pb", ["Encountered input mutation during higher order op tracing"])):
            graphs = files[name]["graphs"]
            root = [g for g in graphs if g["name"] == ""][0]
            with self.subTest(level=name):
                self.assertEqual(root["mutated_inputs"], [0])
                found = [f for g in graphs for f in g.get("findings", [])]
                self.assertEqual([f["message"] for f in found if f["rule"].startswith("hop-")], want)
                self.assertFalse([f for f in found if f["rule"] == "unknown-op" and "classes_test_hop" in f["message"]])


if __name__ == "__main__":
    unittest.main()
