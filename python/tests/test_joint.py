"""`hopctl joint` against real torch (run: make pytest).

PYTHONPATH=python HOPCTL=$PWD/bin/hopctl /usr/bin/python3 -m unittest python/tests/test_joint.py

For every corpus model the joint graph hopctl writes is loaded with
hopctl_torch.load and run on the model's inputs and random tangents; its
forward outputs and gradients must equal the original graph's outputs and
torch.autograd.grad (relative error < 1e-4), for inferred masks and for an
explicit mask that drops an output. The partitioned forward then backward
must give the same gradients, and min-cut must save no more values and no
more bytes than functorch's min_cut_rematerialization_partition on the same
model; the report's total must be the bytes of the tensors hopctl's forward
returns for the backward. On a torch with activation_memory_budget (2.x),
--memory-budget 0.1, 0.5 and 1 must save no more bytes than AOTAutograd at
the same budget, with the gradients still autograd's.
"""

import re

import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
REPO = os.path.dirname(PYROOT)
for p in (os.path.join(PYROOT, "tools"), PYROOT):
    if p not in sys.path:
        sys.path.insert(0, p)

import corpus  # noqa: E402
import hopctl_torch  # noqa: E402
import joint_oracle as O  # noqa: E402

TOL = 1e-4
NO_TORCH_1_13_AOT = {"inplace_views", "shared_storage"}  # aot_function fails or has no backward
# AOTAutograd under a memory budget below 1 recomputes convbn's training-mode
# batch norm in the backward, which then fails ("one of the variables needed
# for gradient computation has been modified by an inplace operation"):
# nothing to compare with (hopctl saves what cannot be recomputed instead).
NO_AOT_BUDGET = {"convbn"}
BUDGETS = (0.1, 0.5, 1.0)


def has_memory_budget():
    try:
        import torch._functorch.config as cfg
    except ImportError:
        return False
    return hasattr(cfg, "activation_memory_budget")


def hopctl():
    exe = os.environ.get("HOPCTL")
    if not exe or not os.access(exe, os.X_OK):
        raise AssertionError("HOPCTL must name the hopctl binary (make pytest sets it)")
    return exe


def run(*args, check=True):
    r = subprocess.run([hopctl(), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError("hopctl %s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r


class JointCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        warnings.simplefilter("ignore")
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.tmp.name, "_".join(parts) + ".pb")

    def assertClose(self, got, want, what):
        self.assertIsInstance(got, torch.Tensor, what)
        self.assertEqual(tuple(got.shape), tuple(want.shape), what + ": shape")
        self.assertEqual(got.dtype, want.dtype, what + ": dtype")
        if want.is_floating_point():
            self.assertLess(O.rel_err(got, want), TOL, what)
        else:
            self.assertTrue(torch.equal(got, want), what)

    def assertGrad(self, got, want, what, zeros_for_none=False):
        if want is None:
            if got is not None:
                self.assertTrue(zeros_for_none, "%s: torch gives no gradient, hopctl gives one" % what)
                self.assertFalse(got.ne(0).any().item(), what + ": expected zeros")
            return
        self.assertIsNotNone(got, "%s: missing gradient" % what)
        self.assertClose(got, want, what)

    def check_joint(self, name, masks_flag=None, ref_masks=None, extra=()):
        out = self.path(name, "joint", *(masks_flag or "auto").split(","), *extra)
        args = ["joint", O.model_path(name), "-o", out, *extra]
        if masks_flag:
            args.append("--masks=" + masks_flag)
        r = run(*args)
        ref = O.Reference(name, ref_masks)
        self.assertIn("masks: " + ",".join("1" if m else "0" for m in ref.masks), r.stdout)
        gm = hopctl_torch.load(out)
        self.assertEqual(gm.hopctl_annotations["hopctl.joint.masks"],
                         ",".join("1" if m else "0" for m in ref.masks))
        ins = O.fresh_inputs(name, detach=True)
        with torch.no_grad():
            res = list(gm(*ins, *ref.tangents))
        n = len(ref.outputs)
        self.assertEqual(len(res), n + len(ins))
        for i, want in enumerate(ref.outputs):
            if isinstance(want, torch.Tensor):
                self.assertClose(res[i], want, "%s output %d" % (name, i))
        for i, want in enumerate(ref.grads):
            self.assertGrad(res[n + i], want, "%s grad %d" % (name, i),
                            zeros_for_none="--unmask-none-gradients" in extra)
        # Copy-back: the joint graph leaves its inputs as the original does.
        for i, (a, b) in enumerate(zip(ins, ref.inputs_after)):
            if isinstance(a, torch.Tensor):
                self.assertTrue(torch.equal(a, b), "%s input %d after the run" % (name, i))
        return ref

    def check_partition(self, name, mode, extra=()):
        """Runs the partition and its graphs; returns (saved count, saved bytes measured)."""
        fw, bw = self.path(name, mode, "fw", *extra), self.path(name, mode, "bw", *extra)
        r = run("joint", O.model_path(name), "--partition", mode, "--fw-out", fw, "--bw-out", bw, "--report", *extra)
        self.assertIn("total", r.stdout)
        m = re.search(r"^partition \S+(?: \(memory budget [^)]*\))?: (\d+) saved values, (\d+) bytes", r.stdout, re.M)
        self.assertIsNotNone(m, r.stdout)
        ref = O.Reference(name)
        fwm, bwm = hopctl_torch.load(fw), hopctl_torch.load(bw)
        ins = O.fresh_inputs(name, detach=True)
        with torch.no_grad():
            fres = list(fwm(*ins))
            n = len(ref.outputs)
            saved = fres[n:]
            grads = list(bwm(*saved, *ref.tangents))
        for i, want in enumerate(ref.outputs):
            if isinstance(want, torch.Tensor):
                self.assertClose(fres[i], want, "%s %s forward output %d" % (name, mode, i))
        self.assertEqual(len(grads), len(ins))
        for i, want in enumerate(ref.grads):
            self.assertGrad(grads[i], want, "%s %s grad %d" % (name, mode, i),
                            zeros_for_none="--unmask-none-gradients" in extra)
        nsaved = int(fwm.hopctl_annotations["hopctl.partition.num_saved"])
        self.assertEqual(nsaved, len(saved))
        self.assertEqual(int(m.group(1)), nsaved, "%s %s: the report's count" % (name, mode))
        measured = sum(O.nbytes(x) for x in saved)
        self.assertEqual(int(m.group(2)), measured,
                         "%s %s: the report's total is not the bytes the forward returns for the backward" % (name, mode))
        return nsaved, measured


def _model_tests(name):
    def test_auto(self):
        self.check_joint(name)

    def test_drop_one_output(self):
        ref = O.Reference(name)
        if not any(ref.masks):
            self.skipTest("no output requires grad")
        masks = list(ref.masks)
        masks[masks.index(True)] = False  # drop the first differentiable output
        flag = ",".join("1" if m else "0" for m in masks)
        self.check_joint(name, flag, masks)

    def test_partition_default(self):
        self.check_partition(name, "default")

    def test_partition_mincut(self):
        ours = self.check_partition(name, "mincut")
        if name in NO_TORCH_1_13_AOT and torch.__version__.startswith("1."):
            return
        from functorch.compile import min_cut_rematerialization_partition
        theirs = O.aot_saved(name, min_cut_rematerialization_partition)
        for k, what in enumerate(("values", "bytes")):
            self.assertLessEqual(ours[k], theirs[k], "%s: hopctl saves %d %s, AOTAutograd %d" % (name, ours[k], what, theirs[k]))

    def test_memory_budget(self):
        # --memory-budget against AOTAutograd's activation_memory_budget at
        # the same budget: no more bytes, gradients autograd's (checked by
        # check_partition).
        if not has_memory_budget():
            self.skipTest("torch %s has no activation_memory_budget" % torch.__version__)
        if name in NO_AOT_BUDGET:
            self.skipTest("AOTAutograd fails on %s under a budget" % name)
        from functorch.compile import min_cut_rematerialization_partition
        for b in BUDGETS:
            with self.subTest(budget=b):
                ours = self.check_partition(name, "mincut", extra=("--memory-budget", str(b)))
                theirs = O.aot_saved(name, min_cut_rematerialization_partition, budget=b)
                self.assertLessEqual(ours[1], theirs[1], "%s at budget %s: hopctl saves %d bytes, AOTAutograd %d"
                                     % (name, b, ours[1], theirs[1]))

    def test_partition_mincut_unmask(self):
        # Inputs without a gradient get zeros_like(input) in the backward:
        # the partition must make the input available there.
        self.check_partition(name, "mincut", extra=("--unmask-none-gradients",))

    return {"test_%s_auto" % name: test_auto,
            "test_%s_partition_mincut_unmask" % name: test_partition_mincut_unmask,
            "test_%s_drop_one_output" % name: test_drop_one_output,
            "test_%s_partition_default" % name: test_partition_default,
            "test_%s_partition_mincut" % name: test_partition_mincut,
            "test_%s_memory_budget" % name: test_memory_budget}


class TestJointCorpus(JointCase):
    pass


def _skipped(reason):
    def test(self):
        self.skipTest(reason)
    return test


for _n in corpus.ALL_NAMES:
    for _k, _f in _model_tests(_n).items():
        if _n in corpus.UNAVAILABLE:
            _f = _skipped("%s: %s" % (_n, corpus.UNAVAILABLE[_n]))
        setattr(TestJointCorpus, _k, _f)


class TestJointOptions(JointCase):
    def test_inplace_views_gradients(self):
        # In-place ops on slices, a transpose and a select of an
        # intermediate; an input mutated through a view (written back).
        ref = self.check_joint("inplace_views")
        self.assertIsNotNone(ref.grads[0])
        self.assertIsNotNone(ref.grads[1])
        gm = hopctl_torch.load(self.path("inplace_views", "joint", "auto"))
        targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
        self.assertIn("aten.slice_scatter.default", targets)
        self.assertIn("aten.select_scatter.default", targets)
        self.assertIn("aten.copy_.default", targets)
        self.assertFalse({"aten.add_.Tensor", "aten.mul_.Tensor", "aten.relu_.default"} & targets)

    def test_masks_all_and_unmask(self):
        self.check_joint("embedding", "all", [True, True])
        self.check_joint("convbn", None, None, extra=("--unmask-none-gradients",))

    def test_create_bw_fn_convention(self):
        out = self.path("mlp", "bwfn")
        run("joint", O.model_path("mlp"), "-o", out, "--hop-convention", "create_bw_fn")
        gm = hopctl_torch.load(out)
        ph = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        self.assertEqual(ph[-1], "tangents_1")
        ref = O.Reference("mlp")
        ins = O.fresh_inputs("mlp", detach=True)
        with torch.no_grad():
            grads = list(gm(*ins, *ref.tangents))
        self.assertEqual(len(grads), len(ins))  # gradients only, one per primal
        for i, want in enumerate(ref.grads):
            self.assertGrad(grads[i], want, "mlp create_bw_fn grad %d" % i)

    def test_create_fw_bw_graph_convention(self):
        out = self.path("embedding", "fwbw")
        run("joint", O.model_path("embedding"), "-o", out, "--hop-convention", "create_fw_bw_graph")
        gm = hopctl_torch.load(out)
        ph = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        self.assertEqual(ph[:2], ["tangents_1", "tangents_2"])  # grads first, then primals
        ref = O.Reference("embedding")
        ins = O.fresh_inputs("embedding", detach=True)
        with torch.no_grad():
            grads = list(gm(*ref.tangents, *ins))
        self.assertEqual(len(grads), len(ins))
        for i, want in enumerate(ref.grads):
            self.assertGrad(grads[i], want, "embedding create_fw_bw_graph grad %d" % i, zeros_for_none=True)
        for g, x in zip(grads, ins):  # integer inputs: zeros too (unmask_none_gradients)
            self.assertIsNotNone(g)

    def test_op_without_rule_fails_without_output(self):
        def f(x):
            return torch.special.i1(x) * 2
        from torch.fx.experimental.proxy_tensor import make_fx
        x = torch.randn(3, requires_grad=True)
        gm = make_fx(f)(x)
        src = os.path.join(self.tmp.name, "prod.pb")
        hopctl_torch.export(gm, src, example_inputs=[x])
        out = os.path.join(self.tmp.name, "prod_joint.pb")
        r = run("joint", src, "-o", out, check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("aten.special_i1.default", r.stderr)
        self.assertIn("no derivative rule", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_inplace_on_multi_output_view_refused(self):
        # Eager autograd refuses an in-place op on an output of split, chunk
        # or unbind that requires grad; hopctl joint refuses the graph
        # (exit 3, naming the node) instead of writing gradients.
        from torch.fx.experimental.proxy_tensor import make_fx
        progs = {
            "split": lambda x: (x * 1).split(2)[0].add_(1),
            "chunk": lambda x: (x * 1).chunk(2)[1].mul_(2),
            "unbind": lambda x: (x * 1).unbind(0)[0].relu_(),
            "split_view": lambda x: (x * 1).split(2)[0].view(-1).add_(1),
            # a split of a split, and a second write under the same view
            # (hopctl records the first write under each view once)
            "split_split": lambda x: (x * 1).split(2)[1].split(1)[0].add_(1),
            "twice": lambda x: (x * 1).split(2)[0].view(-1).add_(1).mul_(2),
        }
        for name, f in progs.items():
            x = torch.randn(4, 3, requires_grad=True)
            with self.assertRaisesRegex(RuntimeError, "modified inplace"):
                f(x.clone())
            with torch.no_grad():
                f(x.detach().clone())  # the near miss: without grad eager allows it
            with torch.no_grad():  # make_fx runs autograd, which refuses with grad
                gm = make_fx(f, tracing_mode="fake")(x)
            src = os.path.join(self.tmp.name, "mov_%s.pb" % name)
            hopctl_torch.export(gm, src, example_inputs=[x])
            out = os.path.join(self.tmp.name, "mov_%s_joint.pb" % name)
            r = run("joint", src, "-o", out, check=False)
            self.assertEqual(r.returncode, 3, name + ": " + r.stderr)
            self.assertIn("is a view and is being modified inplace", r.stderr, name)
            self.assertRegex(r.stderr, r"node (add_|mul_|relu_)", name)
            self.assertFalse(os.path.exists(out), name)

    def test_constant_fills_never_saved(self):
        # zeros, zeros_like, full of a constant (and make_fx's detach of
        # them) are made by the graph that needs them, from their metadata:
        # never saved, as AOTAutograd's min-cut recomputes them.
        # On torch 2.x the trace compares inputs with the fills (maximum's
        # backward masks); min-cut recomputes them with 2.x's recomputable
        # ops (opschema.DiffMinCutRecompute113), as AOTAutograd 2.x does.
        from torch.fx.experimental.proxy_tensor import make_fx
        from functorch.compile import aot_function, min_cut_rematerialization_partition

        def f(x, w):
            return (torch.maximum(x, torch.zeros(3, 4)) * torch.full((3, 4), 2.0)
                    + torch.maximum(w, torch.zeros_like(w)) * x)
        torch.manual_seed(0)
        x, w = torch.randn(3, 4, requires_grad=True), torch.randn(3, 4, requires_grad=True)
        gm = make_fx(f, tracing_mode="fake")(x, w)
        src = os.path.join(self.tmp.name, "fills.pb")
        hopctl_torch.export(gm, src, example_inputs=[x, w])
        out = f(x, w)
        t = torch.randn_like(out)
        want = torch.autograd.grad(out, [x, w], t)
        seen = {}

        def bw_compiler(g, _):
            seen["bw"] = g
            return g
        af = aot_function(f, lambda g, _: g, bw_compiler, partition_fn=min_cut_rematerialization_partition)
        af(x, w).backward(t)
        theirs = len([n for n in seen["bw"].graph.nodes if n.op == "placeholder" and "tangents" not in n.name])
        fills = ("aten.zeros", "aten.zeros_like", "aten.full", "aten.new_zeros", "aten.detach")
        for mode in ("default", "mincut"):
            fw, bw = self.path("fills", mode, "fw"), self.path("fills", mode, "bw")
            run("joint", src, "--partition", mode, "--fw-out", fw, "--bw-out", bw)
            fwm, bwm = hopctl_torch.load(fw), hopctl_torch.load(bw)
            nodes = {n.name: n for n in fwm.graph.nodes}
            outs = list(nodes["output"].args[0])[1:]
            for o in outs:
                self.assertFalse(str(o.target).startswith(fills), "%s saves %s = %s" % (mode, o.name, o.target))
            with torch.no_grad():
                res = list(fwm(x.detach(), w.detach()))
                grads = list(bwm(*res[1:], t))
            for g, wg in zip(grads, want):
                self.assertClose(g, wg, mode + " gradient")
            if mode == "mincut":
                self.assertLessEqual(len(outs), theirs, "hopctl saves %d values, AOTAutograd %d" % (len(outs), theirs))

    def test_lstm_onednn_workspace_needs_grad_mode(self):
        # Why the corpus traces LSTM with oneDNN off on torch 2.x and
        # hopctl has no rule for aten.mkldnn_rnn_layer: derivatives.yaml's
        # formula is mkldnn_rnn_layer_backward(..., workspace = result3),
        # and the oneDNN kernel writes that workspace only when grad mode is
        # on at the forward call. A forward graph run as AOTAutograd runs it
        # (no grad mode) returns None there, which the backward refuses; the
        # grad-mode formula (mkldnn_rnn_layer_differentiable_backward) is no
        # aten operator. (torch's own lstm decomposition uses
        # mkldnn_rnn_layer for inference only: torch/_decomp/decompositions.py
        # select_one_layer_lstm_function.) If this test fails, torch changed:
        # add the rule and trace with oneDNN on.
        if not hasattr(torch.ops.aten, "mkldnn_rnn_layer") or not torch.backends.mkldnn.is_available():
            self.skipTest("torch %s has no aten.mkldnn_rnn_layer" % torch.__version__)
        self.assertFalse(hasattr(torch.ops.aten, "mkldnn_rnn_layer_differentiable_backward"))
        torch.manual_seed(0)
        x, w0, w1 = torch.randn(5, 2, 8), torch.randn(64, 8), torch.randn(64, 16)
        b0, b1, h, c = torch.randn(64), torch.randn(64), torch.zeros(2, 16), torch.zeros(2, 16)
        args = (x, w0, w1, b0, b1, h, c, False, [], 2, 16, 1, True, False, True, True)  # train=True
        with torch.no_grad():
            fwd = torch.ops.aten.mkldnn_rnn_layer(*args)
        self.assertIsNone(fwd[3], "the workspace is written without grad mode now")
        with torch.enable_grad():
            self.assertIsNotNone(torch.ops.aten.mkldnn_rnn_layer(*args)[3])
        with self.assertRaisesRegex(RuntimeError, "workspace"):
            torch.ops.aten.mkldnn_rnn_layer_backward(
                x, w0, w1, b0, b1, h, c, fwd[0], fwd[1], fwd[2], torch.ones_like(fwd[0]), None, None,
                False, 2, 16, 1, True, True, False, [], True, fwd[3])

    def test_dead_code_not_differentiated(self):
        # make_fx keeps dead nodes (map's traces carry a select_copy of xs);
        # they are removed before differentiation: no rule is needed for
        # them and the gradients are autograd's.
        from torch.fx.experimental.proxy_tensor import make_fx

        def f(x):
            torch.select_copy(x, 0, 0)  # dead
            torch.special.i1(x)         # dead, and hopctl has no rule for it
            return x.sin()
        x = torch.randn(3, 4, requires_grad=True)
        gm = make_fx(f)(x)
        self.assertIn("special_i1", gm.code)
        src = os.path.join(self.tmp.name, "dead.pb")
        hopctl_torch.export(gm, src, example_inputs=[x])
        out = os.path.join(self.tmp.name, "dead_joint.pb")
        r = run("joint", src, "-o", out)
        self.assertIn("masks: 1", r.stdout)
        t = torch.randn(3, 4)
        want, = torch.autograd.grad(f(x), [x], t)
        with torch.no_grad():
            res = hopctl_torch.load(out)(x.detach(), t)
        self.assertClose(res[1], want, "gradient")

    def test_bad_mask_count_is_usage_error(self):
        r = run("joint", O.model_path("mlp"), "-o", self.path("bad"), "--masks=1,0", check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertFalse(os.path.exists(self.path("bad")))


class TestJointOpCases(JointCase):
    """One small graph per rule family member (python/tools/joint_opcases.py)."""

    def check_case(self, name, fn, inputs):
        from torch.fx.experimental.proxy_tensor import make_fx
        gm = make_fx(fn, tracing_mode="fake")(*inputs)
        src = self.path("case", name)
        hopctl_torch.export(gm, src, example_inputs=inputs)
        out = self.path("case", name, "joint")
        run("joint", src, "-o", out)
        fresh = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
        outs = O.flatten(fn(*fresh))
        diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        gen = torch.Generator().manual_seed(2)
        tangents = [torch.randn(o.shape, generator=gen, dtype=o.dtype) for o in diff]
        req = [i for i, x in enumerate(fresh) if x.requires_grad]
        want = torch.autograd.grad(diff, [fresh[i] for i in req], tangents, allow_unused=True)
        jm = hopctl_torch.load(out)
        with torch.no_grad():
            res = list(jm(*[x.detach().clone() for x in inputs], *tangents))
        for i, o in enumerate(outs):
            self.assertClose(res[i], o.detach(), "%s output %d" % (name, i))
        grads = res[len(outs):]
        for k, i in enumerate(req):
            self.assertGrad(grads[i], want[k], "%s grad %d" % (name, i))


def _case_test(name, fn, inputs):
    def test(self):
        self.check_case(name, fn, inputs)
    return test


try:
    import joint_opcases
    for _name, _fn, _inputs in joint_opcases.cases():
        setattr(TestJointOpCases, "test_" + _name, _case_test(_name, _fn, _inputs))
except Exception as _e:  # a broken case list must fail, not vanish
    def test_cases_load(self, e=_e):
        raise e
    TestJointOpCases.test_cases_load = test_cases_load


if __name__ == "__main__":
    unittest.main()


class TestJointHOPs(JointCase):
    """cond, map_impl and scan graphs (testdata/hops), run through the
    reference HOP implementations of python/tools/joint_hops.py."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        import importlib
        import joint_hops
        joint_hops.install()
        # torch 2.x registers some HOPs under torch.ops.higher_order only
        # when their module is imported (2.6's map_impl, associative_scan).
        for mod in ("map", "scan", "associative_scan", "invoke_subgraph"):
            try:
                importlib.import_module("torch._higher_order_ops." + mod)
            except ImportError:
                pass  # torch 1.13: the reference implementations

    def check_hop(self, name, torch_version=None):
        from hopctl_torch._proto.hopctl.v1 import graph_pb2 as pb
        msg = hopctl_torch.read_proto(os.path.join(REPO, "testdata", "hops", name + ".pbtxt"))
        if torch_version is not None:
            msg.torch_version = torch_version
        torch.manual_seed(0)
        inputs = []
        for n in msg.graph.nodes:
            if n.op != pb.PLACEHOLDER:
                continue
            t = n.val.tensor
            dtype = getattr(torch, t.dtype)
            shape = [d.value for d in t.shape]
            if dtype.is_floating_point:
                t.requires_grad = True
                inputs.append(torch.randn(shape, dtype=dtype).requires_grad_(True))
            else:
                inputs.append(torch.zeros(shape, dtype=dtype))
        src = self.path("hop", name)
        with open(src, "wb") as f:
            f.write(msg.SerializeToString())
        out = self.path("hop", name, "joint")
        run("joint", src, "-o", out)
        gm = hopctl_torch.load(src)
        outs = O.flatten(gm(*inputs))
        diff = [o for o in outs if o.requires_grad]
        gen = torch.Generator().manual_seed(3)
        tangents = [torch.randn(o.shape, generator=gen) for o in diff]
        want = torch.autograd.grad(diff, inputs, tangents, allow_unused=True)
        jm = hopctl_torch.load(out)
        with torch.no_grad():
            res = list(jm(*[x.detach() for x in inputs], *tangents))
        for i, o in enumerate(outs):
            self.assertClose(res[i], o.detach(), "%s output %d" % (name, i))
        for i, w in enumerate(want):
            self.assertGrad(res[len(outs) + i], w, "%s grad %d" % (name, i))
        return jm

    def test_cond(self):
        jm = self.check_hop("cond")
        self.assertTrue(hasattr(jm, "true_graph_1") and hasattr(jm, "false_graph_1"))

    def test_map(self):
        jm = self.check_hop("map")
        self.assertTrue(hasattr(jm, "body_graph_1"))

    def test_scan(self):
        if _hop_takes(torch.ops.higher_order.scan, "dim"):
            self.check_scan_not_differentiable()
            return
        self.check_hop("scan")

    def check_scan_not_differentiable(self):
        """torch 2.6 cannot run testdata/hops/scan.pbtxt's check: the file
        calls 2.14's scan(combine_fn, init, xs, additional_inputs), and 2.6's
        HOP takes (combine_fn, init, xs, dim, reverse, additional_inputs) —
        but above all torch 2.6 has no autograd for scan
        (autograd_not_implemented in torch/_higher_order_ops/scan.py; version
        row scan-grad-2.6), so there are no torch gradients to compare. This
        asserts that reason: the file's program (hops_testdata.py p_scan) in
        2.6's own form runs forward, and its backward raises 2.6's error;
        autograd.grad finds no path to the operands; and hopctl joint, reading
        the file under 2.6's rules, refuses it with the same words (exit 3)."""
        def combine_fn(h, x, w):
            h_next = (h @ w + x).tanh()
            return h_next, h_next.clone()
        torch.manual_seed(0)
        h, xs, w = (torch.randn(*s, requires_grad=True) for s in [(4,), (5, 4), (4, 4)])
        out = torch.ops.higher_order.scan(combine_fn, [h], [xs], 0, False, [w])
        self.assertEqual([tuple(o.shape) for o in out], [(4,), (5, 4)])
        self.assertEqual(torch.autograd.grad([o.sum() for o in out], [h, xs, w], allow_unused=True), (None, None, None))
        with self.assertRaisesRegex(RuntimeError, "^Autograd not implemented for scan$"):
            out[0].sum().backward()
        from hopctl_torch._proto.hopctl.v1 import graph_pb2 as pb
        msg = hopctl_torch.read_proto(os.path.join(REPO, "testdata", "hops", "scan.pbtxt"))
        msg.torch_version = torch.__version__
        for n in msg.graph.nodes:
            if n.op == pb.PLACEHOLDER:
                n.val.tensor.requires_grad = True
        src = self.path("hop", "scan26")
        with open(src, "wb") as f:
            f.write(msg.SerializeToString())
        r = run("joint", src, "-o", self.path("hop", "scan26", "joint"), check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("node scan: Autograd not implemented for scan", r.stderr)

    def test_associative_scan(self):
        # Under torch 1.13 the reference associative_scan is a sequential
        # loop, so autograd through it is an oracle independent of
        # AssociativeScanAutogradOp's formula hopctl's backward follows.
        if _hop_takes(torch.ops.higher_order.associative_scan, "dim"):
            self.skipTest("testdata/hops/associative_scan.pbtxt calls associative_scan(combine_fn, xs, additional_inputs) "
                          "(torch 2.14); torch %s's takes (combine_fn, xs, dim)" % torch.__version__)
        # The file calls 2.14's form, which 2.14 differentiates (2.6 has no
        # autograd for associative_scan): read as 2.14's whatever it records.
        jm = self.check_hop("associative_scan", torch_version="2.14.1")
        self.assertTrue(any("cumprod" in str(n.target) for n in jm.graph.nodes))

    def test_invoke_subgraph(self):
        if _hop_takes(torch.ops.higher_order.invoke_subgraph, "operands"):
            self.skipTest("torch %s's invoke_subgraph takes its operands as one tuple" % torch.__version__)
        jm = self.check_hop("invoke_subgraph")
        ids = sorted(n.args[1] for n in jm.graph.nodes if "invoke_subgraph" in str(n.target))
        self.assertEqual(ids, ["bw_subgraph_0_0", "bw_subgraph_0_0", "fw_subgraph_0", "fw_subgraph_0"])


def _hop_takes(hop, param):
    """Whether a HOP's __call__ has a (not variadic) parameter of that name:
    its calling convention in the running torch."""
    import inspect
    try:
        p = inspect.signature(hop.__call__).parameters.get(param)
    except (TypeError, ValueError):
        return False
    return p is not None and p.kind != inspect.Parameter.VAR_POSITIONAL
