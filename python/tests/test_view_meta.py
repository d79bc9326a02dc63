"""`hopctl analyze`'s view_meta against AOTAutograd's own: for every program
of python/tools/aot_meta_oracle.py (modelled on test_aotdispatch.py's
input-mutation and output-aliasing tests), traced with make_fx and written
by the bridge with its example inputs, each field hopctl reports equals the
field of torch's ViewAndMutationMeta
(run_functionalized_fw_and_collect_metadata) for the same inputs.

Where hopctl cannot know what torch knows, the miss is listed in KNOWN with
the reason; a listed miss that starts to agree fails too, so the list stays
exact. Needs torch >= 2.6 (1.13 has no _aot_autograd package)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python", "tools"))
sys.path.insert(0, os.path.join(REPO, "python"))

import hopctl_torch  # noqa: E402

try:
    from torch._functorch._aot_autograd import collect_metadata_analysis  # noqa: F401
    HAS_AOT = True
except ImportError:
    HAS_AOT = False

# (program, "inputs[i].field" | "outputs[j].field"): why hopctl differs.
# In each, the graph torch wrote does not carry what the Python program did.
_NO_GRAD_SWITCH = ("make_fx (without pre_dispatch) records no grad-mode switch: the graph does not "
                   "say that the write ran under torch.no_grad()")
KNOWN = {
    ("out_detach", "outputs[0].requires_grad"): (
        "torch 2.14's make_fx traces x.detach() (2.6's keeps aten.detach) as aten.alias.default and records nothing of the "
        "detach: the graph is that of torch.ops.aten.alias(x), whose output requires grad"),
    ("mut_no_grad", "inputs[0].mutations_under_no_grad_or_inference_mode"): _NO_GRAD_SWITCH,
    ("mut_data.pt2", "inputs"): ("torch.export lifts x.data as a constant tensor input "
                                 "(c_lifted_tensor_0): the graph has two inputs, the program one"),
}


# Misses that only torch >= 2.14 shows.
SINCE_2_14 = {("out_detach", "outputs[0].requires_grad")}
TORCH = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


def hopctl():
    exe = os.environ.get("HOPCTL")
    if not exe or not os.path.exists(exe):
        raise RuntimeError("set HOPCTL to the hopctl binary (make pytest does)")
    return exe


def trace(fn, args):
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.utils import _pytree as pytree

    def flat(*a):
        return pytree.tree_leaves(fn(*a))
    clones = [a.clone() if isinstance(a, torch.Tensor) and not a._is_view() else a for a in args]
    return make_fx(flat)(*clones)


class _Program(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def export_pt2(fn, args, path):
    """torch.export of fn, saved as a user would (no decompositions)."""
    from torch.utils import _pytree as pytree

    def flat(*a):
        return tuple(pytree.tree_leaves(fn(*a)))
    ep = torch.export.export(_Program(flat), tuple(args))
    torch.export.save(ep, path)


def compare(want, got):
    """The (field, want, got) triples in which got differs from want."""
    out = []
    for side in ("inputs", "outputs"):
        w, g = want[side], got[side]
        if len(w) != len(g):
            out.append((side, len(w), len(g)))
            continue
        for i, (wi, gi) in enumerate(zip(w, g)):
            for k, v in wi.items():
                if gi.get(k) != v:
                    out.append(("%s[%d].%s" % (side, i, k), v, gi.get(k)))
    return out


@unittest.skipUnless(HAS_AOT, "torch %s has no torch._functorch._aot_autograd" % torch.__version__)
class ViewMetaMatchesAOTAutograd(unittest.TestCase):
    def test_every_program(self):
        import aot_meta_oracle as oracle
        checks, misses, errors = 0, {}, []
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            wants = {}
            for name, fn, make in oracle.PROGRAMS:
                try:
                    wants[name] = oracle.observe(fn, oracle.inputs_of(make))
                except Exception as e:  # noqa: BLE001 - torch refuses the program
                    errors.append("%s: torch: %s" % (name, str(e).splitlines()[0][:120]))
                    continue
                inputs = oracle.inputs_of(make)
                try:
                    gm = trace(fn, inputs)
                except Exception as e:  # noqa: BLE001
                    errors.append("%s: make_fx: %s" % (name, str(e).splitlines()[0][:120]))
                    continue
                paths[name] = os.path.join(d, name + ".pb")
                hopctl_torch.export(gm, paths[name], example_inputs=inputs)
                try:
                    export_pt2(fn, oracle.inputs_of(make), os.path.join(d, name + ".pt2"))
                    paths[name + ".pt2"] = os.path.join(d, name + ".pt2")
                    wants[name + ".pt2"] = wants[name]
                except Exception as e:  # noqa: BLE001 - torch.export refuses the program
                    errors.append("%s: torch.export: %s" % (name, str(e).splitlines()[0][:120]))
            names = sorted(paths)
            proc = subprocess.run([hopctl(), "analyze", "--format", "json"] + [paths[n] for n in names],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            doc = json.loads(proc.stdout)
            by_path = {f["path"]: f for f in doc["files"]}
            for name in names:
                root = [g for g in by_path[paths[name]]["graphs"] if g["name"] == ""][0]
                got = root.get("view_meta")
                self.assertIsNotNone(got, "%s: no view_meta" % name)
                want = wants[name]
                checks += sum(len(x) for x in want["inputs"]) + sum(len(x) for x in want["outputs"])
                for field, w, g in compare(want, got):
                    misses[(name, field)] = (w, g)
        print("\nview_meta: %d programs, %d checks, %d agree" % (len(names), checks, checks - len(misses)), file=sys.stderr)
        for e in errors:
            print("  not compared: " + e, file=sys.stderr)
        unexpected = {k: v for k, v in misses.items() if k not in KNOWN}
        for (name, field), (w, g) in sorted(unexpected.items()):
            print("  %s %s: torch %r, hopctl %r" % (name, field, w, g), file=sys.stderr)
        self.assertEqual(unexpected, {}, "fields where hopctl differs from AOTAutograd")
        # Only programs this torch could export are compared (2.6's
        # torch.export refuses the metadata-mutation programs).
        expected = [k for k in KNOWN if k[0] in names and (k not in SINCE_2_14 or TORCH >= (2, 14))]
        fixed = sorted(k for k in expected if k not in misses)
        self.assertEqual(fixed, [], "listed misses that now agree: remove them from KNOWN")
        self.assertGreaterEqual(len(names), 40)


if __name__ == "__main__":
    unittest.main()
