"""hopctl joint on HOP graphs traced by torch 2.x: gradients equal autograd's.

Runs in a torch 2.x chroot (torch 1.13 has no HOPs: skipped there):

    scripts/torch.sh 2.14 -- env PYTHONPATH=python HOPCTL=$PWD/bin/hopctl \\
        python3 -m unittest python/tests/test_hop_joint.py

Each program (PyTorch's control-flow tests' shapes: test_cond_autograd_simple,
test_map_autograd_simple, test_scan_simple_graph with grads) is traced with
make_fx(tracing_mode="fake") on inputs that require grad, the way AOTAutograd
sees it: the HOP forward torch's autograd runs. hopctl joint's graph, loaded
with hopctl_torch.load and run in this torch, must return the forward outputs
and the gradients torch.autograd.grad computes through the HOP in eager mode.
"""

import json
import os
import re
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

if os.path.join(PYROOT, "tools") not in sys.path:
    sys.path.insert(0, os.path.join(PYROOT, "tools"))
import hop_joint_programs  # noqa: E402

TOL = 1e-5


def hopctl():
    exe = os.environ.get("HOPCTL")
    if not exe or not os.access(exe, os.X_OK):
        raise AssertionError("HOPCTL must name the hopctl binary (make pytest sets it)")
    return exe


def cond_f(x, w):
    return torch.cond(x.sum() > 0, lambda x, w: (x * w).sin(), lambda x, w: x.cos() * w, (x, w))


def cond_false_f(x, w):  # the false branch taken, an operand without gradient in one branch
    return torch.cond(x.sum() > 100, lambda x, w: (x * w).sin(), lambda x, w: x.cos() + 1, (x, w))


def cond_symint_f(x, w):
    # a SymInt operand (the HOP itself: torch.cond takes tensor operands only);
    # branches return 1-tuples, as Dynamo writes them
    n = x.size(0)
    return torch.ops.higher_order.cond(x.sum() > 0, lambda x, w, n: ((x * w).sin() * n,),
                                       lambda x, w, n: (x.cos() * w + n,), (x, w, n))[0]


def map_f(xs, w):
    from torch._higher_order_ops.map import map as hop_map
    return hop_map(lambda x, w: (x * w).sin(), xs, w)


def scan_f(init, xs, w):
    # the HOP itself: torch.scan's wrapper compiles with Dynamo, which make_fx cannot trace
    def comb(c, x, w):
        n = c * x.sin() + w
        return n, n.clone()
    return tuple(torch.ops.higher_order.scan(comb, [init], [xs], [w]))


def _r(*s):
    return torch.randn(*s)


PROGRAMS = {
    "cond": (cond_f, lambda: [_r(3, 4).abs(), _r(3, 4)]),
    "cond_false": (cond_false_f, lambda: [_r(3, 4), _r(3, 4)]),
    "cond_symint": (cond_symint_f, lambda: [_r(3, 4).abs(), _r(3, 4)]),
    "map": (map_f, lambda: [_r(5, 3), _r(3)]),
    "scan": (scan_f, lambda: [_r(3), _r(4, 3), _r(3)]),
}
# while_loop (test_control_flow.py's WHILE_LOOP_TESTS, with grad) and a cond
# with an in-place op in a branch: the programs of the real-trace joint
# corpus (python/tools/hop_joint_programs.py), whose floating inputs require
# grad.
PROGRAMS.update({name: (fn, make) for name, _, fn, make, _, _, _ in hop_joint_programs.PROGRAMS
                 if name.startswith("while_") or name == "cond_inplace"})


def flat(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@unittest.skipUnless(hasattr(torch, "cond"), "torch %s has no HOPs" % torch.__version__)
class HOPJointMatchesAutograd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, name, mode="fake"):
        from torch.fx.experimental.proxy_tensor import make_fx
        f, make = PROGRAMS[name]
        torch.manual_seed(0)
        ins = [x.requires_grad_() if x.is_floating_point() else x for x in make()]
        gm = make_fx(f, tracing_mode=mode)(*ins)
        self.assertTrue(any(isinstance(n.target, torch._ops.HigherOrderOperator) for n in gm.graph.nodes),
                        "%s: the trace has no HOP" % name)
        src = os.path.join(self.tmp.name, name + ".pb")
        out = os.path.join(self.tmp.name, name + "_joint.pb")
        hopctl_torch.export(gm, src, example_inputs=ins)
        r = subprocess.run([hopctl(), "joint", src, "-o", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        outs = flat(f(*ins))
        diff = [o for o in outs if o.requires_grad]
        gen = torch.Generator().manual_seed(1)
        ts = [torch.randn(o.shape, generator=gen) for o in diff]
        wrt = [x for x in ins if x.requires_grad]
        got = iter(torch.autograd.grad(diff, wrt, ts, allow_unused=True))
        want = [next(got) if x.requires_grad else None for x in ins]
        jm = hopctl_torch.load(out)
        with torch.no_grad():
            res = flat(jm(*[x.detach() for x in ins], *ts))
        self.assertEqual(len(res), len(outs) + len(ins))
        for k, o in enumerate(outs):
            torch.testing.assert_close(res[k], o.detach(), atol=TOL, rtol=TOL, msg="%s output %d" % (name, k))
        for k, w in enumerate(want):
            g = res[len(outs) + k]
            if w is None:
                self.assertTrue(g is None or not g.ne(0).any(), "%s grad %d: torch has none" % (name, k))
                continue
            self.assertIsNotNone(g, "%s grad %d missing" % (name, k))
            torch.testing.assert_close(g, w, atol=TOL, rtol=TOL, msg="%s grad %d" % (name, k))
        return jm

    def test_cond(self):
        self.check("cond")

    def test_cond_false_branch(self):
        self.check("cond_false")

    def test_cond_symint_operand(self):
        # The backward cond's branches return one gradient per tensor
        # operand (filter_with_masks), no slot for the SymInt (2.14).
        jm = self.check("cond_symint", mode="symbolic")
        conds = [n for n in jm.graph.nodes if n.op == "call_function" and "cond" in str(n.target)]
        self.assertEqual(len(conds), 2)
        bw_branch = getattr(jm, conds[1].args[1].target)
        out = [n for n in bw_branch.graph.nodes if n.op == "output"][0]
        # torch 2.6 (create_fw_bw_graph) keeps a slot for every operand,
        # the SymInt's included (hopctl's version row cond-backward-2.6).
        want = 2 if _torch_at_least(2, 14) else 3
        self.assertEqual(len(out.args[0]), want, "backward branch returns %s" % (out.args[0],))

    def test_map(self):
        self.check("map")

    def test_scan(self):
        if tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2]) < (2, 14):  # 2.6's scan HOP takes (combine_fn, init, xs, dim, reverse, additional_inputs)
            self.skipTest("torch %s has no autograd for scan (version row scan-grad-2.6; test_joint.py's "
                          "TestJointHOPs.test_scan asserts 2.6's refusal and hopctl's)" % torch.__version__)
        self.check("scan")

    def _check_while(self, name):
        if not hasattr(torch.ops.higher_order, "while_loop_stack_output"):
            return self.check_refused(name)
        return self.check(name)

    def check_refused(self, name):
        """A torch without autograd for the HOP (2.6's while_loop): hopctl
        joint refuses the trace (exit 3) with torch's own message."""
        from torch.fx.experimental.proxy_tensor import make_fx
        f, make = PROGRAMS[name]
        torch.manual_seed(0)
        ins = [x.requires_grad_() if x.is_floating_point() else x for x in make()]
        outs = [o for o in flat(f(*ins)) if o.requires_grad]
        with self.assertRaises(RuntimeError) as cm:
            # backward (grad would stop at "appears to not have been
            # used": the outputs' DelayedError node does not lead to them)
            torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
        msg = str(cm.exception).splitlines()[0]
        # Traced without grad (2.6's tracing refuses carries that require
        # grad: "Expected carried_inputs and body outputs return tensors
        # with same metadata ... requires_grad"); the file records the
        # inputs' requires_grad.
        gm = make_fx(f, tracing_mode="fake")(*[x.detach() for x in ins])
        src = os.path.join(self.tmp.name, name + ".pb")
        out = os.path.join(self.tmp.name, name + "_joint.pb")
        hopctl_torch.export(gm, src, example_inputs=ins)
        r = subprocess.run([hopctl(), "joint", src, "-o", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(msg, r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_while_simple(self):
        jm = self._check_while("while_simple")
        if jm is None:
            return  # refused, as this torch refuses it
        # PyTorch's structure (WhileLoopAutogradOp): the forward stacks
        # the carries, the backward is one while_loop over (idx,
        # *grad_carries, *grad_additional_inputs).
        loops = [str(n.target) for n in jm.graph.nodes if n.op == "call_function" and "while_loop" in str(n.target)]
        self.assertEqual(loops, ["while_loop_stack_output", "while_loop"])

    def test_while_linear(self):
        self._check_while("while_linear")

    def test_while_nested(self):
        self._check_while("while_nested")

    def test_while_nested_int_carries(self):
        self._check_while("while_nested2")

    def test_while_never_entered(self):
        self._check_while("while_never")

    def test_while_body_mutation(self):
        jm = self._check_while("while_mutation")
        if jm is not None:
            self.assertEqual(inplace_in_subgraphs(jm), {})

    def test_while_partitions(self):
        # The joint partitioned (default, mincut), run forward then
        # backward in torch: autograd's gradients. (What min-cut saves
        # against AOTAutograd's min-cut: HOPJointCorpusMatchesAutograd.
        # test_mincut_saves_no_more_than_aotautograd, on these programs
        # among the corpus's.)
        if not hasattr(torch.ops.higher_order, "while_loop_stack_output"):
            self.skipTest("torch %s cannot differentiate while_loop" % torch.__version__)
        from torch.fx.experimental.proxy_tensor import make_fx
        for name in ("while_simple", "while_linear", "while_nested2", "while_mutation", "while_never"):
            f, make = PROGRAMS[name]
            torch.manual_seed(0)
            ins = [x.requires_grad_() if x.is_floating_point() else x for x in make()]
            src = os.path.join(self.tmp.name, name + "_p.pb")
            hopctl_torch.export(make_fx(f, tracing_mode="fake")(*ins), src, example_inputs=ins)
            outs = flat(f(*ins))
            diff = [o for o in outs if o.requires_grad]
            ts = [torch.randn(o.shape) for o in diff]
            wrt = [x for x in ins if x.requires_grad]
            want = torch.autograd.grad(diff, wrt, ts)
            for mode in ("default", "mincut"):
                with self.subTest(program=name, partition=mode):
                    fw, bw = [os.path.join(self.tmp.name, "%s_%s_%s.pb" % (name, mode, k)) for k in ("fw", "bw")]
                    r = subprocess.run([hopctl(), "joint", src, "--partition", mode, "--fw-out", fw, "--bw-out", bw],
                                       capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    fwm, bwm = hopctl_torch.load(fw), hopctl_torch.load(bw)
                    with torch.no_grad():
                        res = flat(fwm(*[x.detach() for x in ins]))
                        grads = flat(bwm(*res[len(outs):], *ts))
                    got = [g for g, x in zip(grads, ins) if x.requires_grad]
                    for g, w in zip(got, want):
                        torch.testing.assert_close(g, w, atol=TOL, rtol=TOL)

    def test_cond_body_inplace(self):
        # The trace's branch has mul_ on a clone; the joint's branches are
        # functional, as AOTAutograd's are (testdata/hops_real/joint).
        jm = self.check("cond_inplace")
        self.assertEqual(inplace_in_subgraphs(jm), {})


def inplace_in_subgraphs(gm):
    """The in-place ops (mutable OpOverloads) of gm's subgraphs."""
    return {name: sorted({str(n.target) for n in m.graph.nodes if n.op == "call_function"
                          and isinstance(n.target, torch._ops.OpOverload) and n.target._schema.is_mutable})
            for name, m in gm.named_modules()
            if name and any(n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
                            and n.target._schema.is_mutable for n in m.graph.nodes)}


def _torch_at_least(major, minor):
    return tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2]) >= (major, minor)


@unittest.skipUnless(_torch_at_least(2, 14), "torch %s: associative_scan has no autograd before 2.14, "
                     "nested_compile_region's inlining switch is 2.14's" % torch.__version__)
class HOPJointCorpusMatchesAutograd(unittest.TestCase):
    """The real-trace joint corpus (python/tools/hop_joint_corpus.py):
    associative_scan, cond over a SymInt operand, invoke_subgraph with
    Dynamo's inline_single_use_invoke_subgraph on and off. Every program is
    traced again in this torch (in a fresh interpreter: Dynamo's state);
    where torch differentiates it, hopctl's joint run in torch gives the
    gradients torch.autograd.grad computes; where torch refuses, hopctl
    joint refuses with torch's message (exit 3); on the torch the
    committed corpus was made with, the fresh verdicts equal the committed
    ones (testdata/hops_real/joint/joint.json, read by the Go tests)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tools = os.path.join(PYROOT, "tools")
        subprocess.run([sys.executable, os.path.join(tools, "hop_joint_corpus.py"), cls.tmp.name], check=True,
                       env=dict(os.environ, PYTHONPATH=PYROOT), cwd=os.path.dirname(PYROOT),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(cls.tmp.name, "joint.json")) as f:
            cls.verdicts = json.load(f)
        if tools not in sys.path:
            sys.path.insert(0, tools)
        import hop_joint_corpus
        cls.corpus = hop_joint_corpus

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def oracle(self, fn, make, rg, verdict):
        """The program run eagerly: its outputs, random tangents, the
        gradients autograd computes (by input index), and the graph's
        inputs — the program's, and the sizes Dynamo lifted to inputs under
        dynamic shapes — with their layout."""
        ins = self.corpus.inputs_of(make, rg)
        outs = flat(fn(*ins))
        diff = [o for o in outs if o.requires_grad]
        gen = torch.Generator().manual_seed(1)
        ts = [torch.randn(o.shape, generator=gen) for o in diff]
        want = dict(zip(rg, torch.autograd.grad(diff, [ins[k] for k in rg], ts, allow_unused=True)))
        layout = verdict["graph_inputs"]
        return outs, ts, want, layout, self.corpus.graph_args(layout, [x.detach() for x in ins])

    def test_committed_corpus_is_fresh(self):
        with open(os.path.join(os.path.dirname(PYROOT), "testdata", "hops_real", "joint", "joint.json")) as f:
            committed = json.load(f)
        if committed["torch_version"] != self.verdicts["torch_version"]:
            self.skipTest("committed corpus is torch %s's" % committed["torch_version"])
        self.assertEqual(self.verdicts, committed)

    def test_gradients_equal_autograd(self):
        checked = 0
        for name, test, fn, make, rg, mode, inline in self.corpus.PROGRAMS:
            with self.subTest(program=name, pytorch_test=test):
                v = self.verdicts["programs"][name]
                src = os.path.join(self.tmp.name, name + ".pb")
                out = os.path.join(self.tmp.name, name + "_joint.pb")
                r = subprocess.run([hopctl(), "joint", src, "-o", out], capture_output=True, text=True)
                if v["error"] is not None:
                    self.assertEqual(r.returncode, 3, r.stderr)
                    self.assertIn(v["error"], r.stderr)
                    self.assertFalse(os.path.exists(out))
                    continue
                self.assertEqual(r.returncode, 0, r.stderr)
                outs, ts, want, layout, args = self.oracle(fn, make, rg, v)
                jm = hopctl_torch.load(out)
                with torch.no_grad():
                    res = flat(jm(*args, *ts))
                self.assertEqual(len(res), len(outs) + len(args))
                for k, o in enumerate(outs):
                    torch.testing.assert_close(res[k], o.detach(), atol=TOL, rtol=TOL, msg="%s output %d" % (name, k))
                for i, k in enumerate(layout):
                    g = res[len(outs) + i]
                    if not isinstance(k, int) or k not in rg:
                        self.assertIsNone(g, "%s grad of graph input %d: it does not require grad" % (name, i))
                        continue
                    self.assertIsNotNone(g, "%s grad %d missing" % (name, k))
                    torch.testing.assert_close(g, want[k], atol=TOL, rtol=TOL, msg="%s grad %d" % (name, k))
                checked += 1
        self.assertGreaterEqual(checked, 10)

    def test_partitions_equal_autograd(self):
        # The partitioned forward then backward (default and min-cut) give
        # autograd's gradients: the HOP backwards survive partitioning.
        checked = 0
        for name, test, fn, make, rg, mode, inline in self.corpus.PROGRAMS:
            v = self.verdicts["programs"][name]
            if v["error"] is not None:
                continue
            outs, ts, want, layout, args = self.oracle(fn, make, rg, v)
            for part in ("default", "mincut"):
                with self.subTest(program=name, partition=part):
                    # Symbolic sizes count 4096 elements and symbolic ints
                    # weigh 1 and may be saved (AOTAutograd's _size_of and
                    # sym_node_size), so min-cut partitions symbolic-shaped
                    # HOP backwards, a cond over a SymInt operand included.
                    src = os.path.join(self.tmp.name, name + ".pb")
                    fw = os.path.join(self.tmp.name, "%s_%s_fw.pb" % (name, part))
                    bw = os.path.join(self.tmp.name, "%s_%s_bw.pb" % (name, part))
                    r = subprocess.run([hopctl(), "joint", src, "--partition", part, "--fw-out", fw, "--bw-out", bw],
                                       capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    fwm, bwm = hopctl_torch.load(fw), hopctl_torch.load(bw)
                    with torch.no_grad():
                        fres = flat(fwm(*args))
                        # AOTAutograd's order: the forward returns the saved
                        # tensors then the saved sizes; the backward takes
                        # the sizes first.
                        saved = fres[len(outs):]
                        sizes = [x for x in saved if not isinstance(x, torch.Tensor)]
                        grads = flat(bwm(*sizes, *[x for x in saved if isinstance(x, torch.Tensor)], *ts))
                    for k, o in enumerate(outs):
                        torch.testing.assert_close(fres[k], o.detach(), atol=TOL, rtol=TOL)
                    self.assertEqual(len(grads), len(args))
                    for i, k in enumerate(layout):
                        if isinstance(k, int) and k in rg:
                            torch.testing.assert_close(grads[i], want[k], atol=TOL, rtol=TOL,
                                                       msg="%s %s grad %d" % (name, part, k))
                        else:
                            self.assertIsNone(grads[i])
                    checked += 1
        self.assertGreaterEqual(checked, 19)

    def test_mincut_saves_no_more_than_aotautograd(self):
        # hopctl's min-cut (joint --partition mincut --report) saves no
        # more values, and no more bytes, than AOTAutograd's
        # min_cut_rematerialization_partition on the same program
        # (aot_function, measured by the corpus in this torch:
        # "aot_mincut_saved"). hopctl's bytes are those of the saved values
        # its forward returns run on the program's inputs, so symbolic
        # sizes (a while_loop's stacked carries) count at this run's sizes,
        # as AOTAutograd's do; the report's count is the values returned.
        over, checked = [], 0
        for name, test, fn, make, rg, mode, inline in self.corpus.PROGRAMS:
            v = self.verdicts["programs"][name]
            if v["error"] is not None:
                continue
            theirs = v["aot_mincut_saved"]
            outs, ts, want, layout, args = self.oracle(fn, make, rg, v)
            src = os.path.join(self.tmp.name, name + ".pb")
            fw = os.path.join(self.tmp.name, "%s_aot_fw.pb" % name)
            bw = os.path.join(self.tmp.name, "%s_aot_bw.pb" % name)
            r = subprocess.run([hopctl(), "joint", src, "--partition", "mincut", "--fw-out", fw, "--bw-out", bw,
                                "--report"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            m = re.search(r"^partition mincut: (\d+) saved values", r.stdout, re.M)
            self.assertIsNotNone(m, r.stdout)
            with torch.no_grad():
                saved = flat(hopctl_torch.load(fw)(*args))[len(outs):]
            self.assertEqual(int(m.group(1)), len(saved), "%s: the report's count" % name)
            mine = {"count": len(saved), "bytes": sum(self.corpus.nbytes(x) for x in saved)}
            for k in ("count", "bytes"):
                if mine[k] > theirs[k]:
                    over.append("%s (%s): %d %s, AOTAutograd %d (%s)" % (name, test, mine[k], k, theirs[k],
                                                                         ", ".join(theirs["values"])))
            checked += 1
        self.assertEqual(over, [], "hopctl's min-cut saves more than AOTAutograd's")
        self.assertGreaterEqual(checked, 20)


if __name__ == "__main__":
    unittest.main()
