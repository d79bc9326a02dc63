"""The bridge on torch 2.x: graphs from make_fx with HOPs, from Dynamo (a
torch.compile backend, hopctl_torch.dump_backend) and from AOTAutograd, with
the constants torch 2.x puts in them (slices, Ellipsis, pytree TreeSpecs such
as auto_functionalized_v2's _op_schema) and the grad mode of the trace.

Every graph is exported, loaded back, run against the original and exported
again (the same message), and converted by the Go writer (`hopctl convert`)
without change. Skipped, with the reason, on torch 1.13, which has none of
these (scripts/pytest.sh runs this under 2.6 and 2.14).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
if PYROOT not in sys.path:
    sys.path.insert(0, PYROOT)

import hopctl_torch  # noqa: E402

HAS_HOPS = hasattr(getattr(torch, "ops", None), "higher_order") and hasattr(torch, "cond")
NO_HOPS = "torch %s has no higher-order operators, Dynamo backends or pytree constants" % torch.__version__


def _flat(o):
    if isinstance(o, (list, tuple)):
        return [y for x in o for y in _flat(x)]
    return [o]


def take(x, spec, schema, s):
    return x + spec.num_leaves + len(schema.arguments) + len(range(10)[s])


@unittest.skipUnless(HAS_HOPS, NO_HOPS)
class Torch2Bridge(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hopctl_t2_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def roundtrip(self, path):
        """load(path) -> GraphModule; re-export equals the file; hopctl convert keeps it."""
        msg = hopctl_torch.read_proto(path)
        gm = hopctl_torch.load(path)
        self.assertEqual(hopctl_torch.to_proto(gm), msg, "%s: load then export differs" % path)
        exe = os.environ.get("HOPCTL")
        if not exe:
            self.fail("HOPCTL is not set (make pytest sets it)")
        for ext in ("json", "pbtxt"):
            dst = os.path.join(self.tmp, os.path.basename(path) + ".go." + ext)
            r = subprocess.run([exe, "convert", path, dst], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(hopctl_torch.read_proto(dst), msg, "hopctl convert changed %s" % path)
        r = subprocess.run([exe, "analyze", path], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, "hopctl analyze %s: %s" % (path, r.stderr))
        return gm, msg

    def assertAllClose(self, got, want, what):
        got, want = _flat(got), _flat(want)
        self.assertEqual(len(got), len(want), what)
        for i, (g, w) in enumerate(zip(got, want)):
            if isinstance(w, torch.Tensor):
                self.assertTrue(torch.allclose(g, w, atol=1e-6), "%s[%d]" % (what, i))
            else:
                self.assertEqual(g, w, "%s[%d]" % (what, i))

    def test_make_fx_cond(self):
        from torch.fx.experimental.proxy_tensor import make_fx

        def f(x, y):
            return torch.cond(x.sum() > 0, lambda x, y: (x + y).sin(), lambda x, y: (x - y).cos(), (x, y))

        x, y = torch.randn(3), torch.randn(3)
        gm = make_fx(f)(x, y)
        path = os.path.join(self.tmp, "cond.pb")
        hopctl_torch.export(gm, path, example_inputs=[x, y], grad_enabled=torch.is_grad_enabled())
        loaded, msg = self.roundtrip(path)
        self.assertEqual([n.target for n in msg.graph.nodes if n.op == 3][-2:],
                         ["higher_order.cond", "_operator.getitem"])
        self.assertEqual(sorted(s.qualified_name for s in msg.submodules), ["false_graph_0", "true_graph_0"])
        self.assertTrue(msg.HasField("grad_enabled") and msg.grad_enabled)
        self.assertTrue(loaded.hopctl_grad_enabled)
        for sign in (1, -1):  # both branches
            a = x.abs() * sign
            self.assertAllClose(loaded(a, y), f(a, y), "cond sign %d" % sign)

    def test_dynamo_and_aot_graphs(self):
        be = hopctl_torch.dump_backend(os.path.join(self.tmp, "dump"))

        def fn(x, y):
            z = x[1:, ...] * 2  # a slice and Ellipsis in the Dynamo graph
            return torch.cond(y.sum() > 0, lambda a: a.sin(), lambda a: a.cos(), (z,))

        x = torch.randn(4, 3, requires_grad=True)
        y = torch.randn(3).abs()
        out = torch.compile(fn, backend=be, fullgraph=True)(x, y)
        out.sum().backward()
        names = [os.path.basename(p) for p in be.files]
        self.assertEqual(names, ["000_dynamo.pb", "000_forward.pb", "000_backward.pb"])
        graphs = {}
        for p in be.files:
            gm, msg = self.roundtrip(p)
            self.assertTrue(msg.HasField("grad_enabled") and msg.grad_enabled, p)
            graphs[os.path.basename(p)[4:-3]] = (gm, msg)
        gm, msg = graphs["dynamo"]
        kinds = {a.WhichOneof("kind") for n in msg.graph.nodes for a in n.args
                 for a in ([a] + list(a.tuple.items))}
        self.assertTrue({"slice", "ellipsis"} <= kinds, kinds)
        xd = x.detach()
        self.assertAllClose(gm(xd, y), (fn(xd, y),), "Dynamo graph")
        # AOTAutograd's forward then backward, loaded, give torch's gradient.
        fw, _ = graphs["forward"]
        bw, _ = graphs["backward"]
        fres = _flat(fw(xd, y))
        nout = 1
        self.assertAllClose(fres[:nout], [fn(xd, y)], "AOT forward")
        grads = _flat(bw(*fres[nout:], torch.ones(3, 3)))
        self.assertAllClose(grads[0], x.grad, "AOT backward")

    def test_dynamo_graphs_of_the_corpus(self):
        # Every corpus model (its lifted function) compiled with dump_backend:
        # each graph Dynamo and AOTAutograd hand over round-trips, and the
        # Dynamo graphs, loaded, compute what the model computes.
        sys.path.insert(0, os.path.join(PYROOT, "tools"))
        import corpus
        for name in corpus.NAMES:
            with self.subTest(model=name):
                torch._dynamo.reset()
                be = hopctl_torch.dump_backend(os.path.join(self.tmp, "corpus_" + name))
                spec = corpus.BUILDERS[name]()
                _, flat, fn = corpus._lifted(spec)
                want = fn(*corpus.make_inputs(name))
                got = torch.compile(fn, backend=be)(*corpus.make_inputs(name))
                self.assertAllClose(got, want, name + " compiled")
                kinds = [os.path.basename(p)[4:-3] for p in be.files]
                if not kinds and name in ("lstm", "gru"):
                    # corpus.RNN rebuilds the module's _flat_weights: Dynamo
                    # runs it eagerly and hands the backend no graph.
                    self.skipTest("%s: Dynamo hands the backend no graph (it runs nn.%s eagerly)"
                                  % (name, name.upper()))
                self.assertIn("dynamo", kinds)
                for p in be.files:
                    gm, _ = self.roundtrip(p)
                    if p.endswith("_dynamo.pb"):
                        # Dynamo names each placeholder after its source,
                        # L_args_<i>_, in an order of its own.
                        ins = corpus.make_inputs(name)
                        idx = [re.fullmatch(r"L_args_(\d+)_", n.target)
                               for n in gm.graph.nodes if n.op == "placeholder"]
                        self.assertTrue(all(idx), [n.target for n in gm.graph.nodes if n.op == "placeholder"])
                        self.assertAllClose(gm(*[ins[int(m.group(1))] for m in idx]), want,
                                            name + " Dynamo graph")

    def test_grad_mode_is_recorded(self):
        be = hopctl_torch.dump_backend(os.path.join(self.tmp, "nograd"))
        with torch.no_grad():
            torch.compile(lambda a: a.sin() * 2, backend=be)(torch.randn(3, requires_grad=True))
        self.assertEqual([os.path.basename(p) for p in be.files], ["000_dynamo.pb", "000_inference.pb"])
        for p in be.files:
            msg = hopctl_torch.read_proto(p)
            self.assertTrue(msg.HasField("grad_enabled"), p)
            self.assertFalse(msg.grad_enabled, p)
            self.assertFalse(hopctl_torch.load(p).hopctl_grad_enabled)
        # A graph whose grad mode nobody recorded says nothing.
        from torch.fx.experimental.proxy_tensor import make_fx
        path = os.path.join(self.tmp, "unknown.pb")
        hopctl_torch.export(make_fx(lambda a: a + 1)(torch.randn(2)), path)
        self.assertFalse(hopctl_torch.read_proto(path).HasField("grad_enabled"))

    def test_auto_functionalized_hop_with_op_schema(self):
        # A cond branch that mutates an input, compiled without grad:
        # AOTAutograd functionalizes the HOP into auto_functionalized_v2 and
        # lifts its _op_schema (the TreeSpec of a SchemaHolder) to a get_attr.
        import torch._higher_order_ops.auto_functionalize as af
        if not hasattr(af, "SchemaHolder"):
            self.skipTest("torch %s does not auto-functionalize HOPs (no SchemaHolder)" % torch.__version__)
        be = hopctl_torch.dump_backend(os.path.join(self.tmp, "af"))

        def mutate(x, buf):
            buf.add_(1)
            return x.sin() + buf

        def fn(x, buf):
            return torch.cond(x.sum() > 0, mutate, lambda x, buf: x.cos() + buf, (x, buf))

        x = torch.randn(3).abs()
        with torch.no_grad():
            torch.compile(fn, backend=be, fullgraph=True)(x, torch.zeros(3))
        gm, msg = self.roundtrip(be.files[-1])
        calls = [n for n in msg.graph.nodes if n.target == "higher_order.auto_functionalized_v2"]
        self.assertEqual(len(calls), 1)
        spec_attr = [a for a in msg.attributes if a.HasField("constant")]
        self.assertEqual(len(spec_attr), 1)
        self.assertEqual(spec_attr[0].constant.constant.type, "torch.utils._pytree.TreeSpec")
        spec = getattr(gm, spec_attr[0].qualified_name)
        holder = torch.utils._pytree.tree_unflatten([], spec)
        self.assertIsInstance(holder, af.SchemaHolder)
        self.assertIn("cond(", str(holder.schema))
        # The loaded graph runs the functional cond: the new buffer is returned,
        # the input is left alone.
        buf = torch.zeros(3)
        res = _flat(gm(x, buf))
        want_buf = torch.ones(3)
        self.assertTrue(torch.equal(buf, torch.zeros(3)))
        self.assertTrue(any(torch.allclose(r, want_buf) for r in res))
        self.assertTrue(any(torch.allclose(r, x.sin() + want_buf) for r in res))

    def test_treespec_and_schema_constants(self):
        import torch.utils._pytree as pytree
        from collections import OrderedDict

        spec = pytree.tree_flatten({"a": (1, [2, 3]), "b": OrderedDict(c=4)})[1]
        schema = torch._C.parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")

        # FX cannot print a TreeSpec or a schema inline; graphs read them
        # with get_attr, as AOTAutograd's _tree_spec_constant0.
        g = torch.fx.Graph()
        x = g.placeholder("x")
        args = (x, g.get_attr("spec"), g.get_attr("schema"), slice(2, None, 3))
        g.output(g.call_function(take, args))
        root = torch.nn.Module()
        root.spec, root.schema = spec, schema
        gm = torch.fx.GraphModule(root, g)
        path = os.path.join(self.tmp, "consts.pbtxt")
        hopctl_torch.export(gm, path)
        loaded, msg = self.roundtrip(path)
        self.assertEqual({a.qualified_name: a.constant.constant.type for a in msg.attributes},
                         {"spec": "torch.utils._pytree.TreeSpec", "schema": "torch._C.FunctionSchema"})
        self.assertEqual(loaded.spec, spec)
        self.assertEqual(str(loaded.schema), str(schema))
        node = [n for n in loaded.graph.nodes if n.op == "call_function"][0]
        self.assertEqual(node.args[3], slice(2, None, 3))
        t = torch.zeros(2)
        self.assertTrue(torch.equal(loaded(t), gm(t)))


if __name__ == "__main__":
    unittest.main()
