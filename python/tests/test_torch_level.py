"""Torch-level graphs (torch.fx.symbolic_trace; Dynamo records the same
call_method and torch.* nodes) through hopctl: a method that has an ATen
overload is analysed with that overload's alias and write semantics — an
input mutated through x.add_(1) is found, as torch's version counters see
it (alias_oracle) — and a node with no ATen equivalent is an error-level
finding (lint exits 1), never a silent pass."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python", "tools"))
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402

import alias_oracle  # noqa: E402
import hopctl_torch  # noqa: E402


class Mutates(torch.nn.Module):
    def forward(self, x, y):
        x.add_(1)
        z = torch.add(x, y)
        return z.view(-1), z.sum()


class Functional(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.relu(x) + 1


def inputs():
    return [torch.randn(2, 3), torch.randn(2, 3)]


class TorchLevel(unittest.TestCase):
    def root(self, gm, example):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.pb")
            hopctl_torch.export(gm, path, example)
            doc = hopctl_torch.analyze(path)
            lint = hopctl_torch.lint(path, fail_on="error")
        return [g for g in doc["files"][0]["graphs"] if g["name"] == ""][0], lint

    def test_methods_mapped_to_aten(self):
        gm = torch.fx.symbolic_trace(Mutates())
        self.assertIn("call_method", str(gm.graph))
        root, _ = self.root(gm, inputs())
        want = alias_oracle.observe(gm, inputs())
        self.assertEqual(want["mutated_inputs"], [0], "the oracle sees x written")
        self.assertEqual(sorted(root["mutated_inputs"]), want["mutated_inputs"])
        self.assertEqual(root["inp_out_alias"], want["inp_out_alias"])
        self.assertEqual([f for f in root["findings"] if f["rule"] == "unknown-op"], [])

    def test_unanalysable_is_an_error(self):
        gm = torch.fx.symbolic_trace(Functional())
        root, lint = self.root(gm, inputs()[:1])
        errors = [f for f in root["findings"] if f["severity"] == "error"]
        self.assertEqual(len(errors), 1, root["findings"])
        self.assertIn("torch.nn.functional.relu", errors[0]["message"])


class FrozenParameters(unittest.TestCase):
    """make_fx(model) without lifting the parameters makes them get_attr
    constants: joint gives them no gradient, so the bridge warns at export
    and joint says which attributes and how to lift them."""

    def test_warned_and_reported(self):
        import subprocess
        import warnings
        from torch.fx.experimental.proxy_tensor import make_fx
        gm = make_fx(torch.nn.Linear(3, 2))(torch.randn(4, 3))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.pb")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                hopctl_torch.export(gm, path, [torch.randn(4, 3, requires_grad=True)])
            msgs = [str(w.message) for w in caught if "get_attr constants" in str(w.message)]
            self.assertEqual(len(msgs), 1, [str(w.message) for w in caught])
            self.assertIn("2 tensor(s) requiring grad", msgs[0])
            p = subprocess.run([hopctl_torch._run.binary(), "joint", path, "-o", os.path.join(d, "j.pb")],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("no gradient for 2 tensor attribute(s) that require grad", p.stdout)
            self.assertIn("functional_call", p.stdout)
        # Lifted (the parameters as inputs), nothing is said.
        lin = torch.nn.Linear(3, 2)
        lifted = make_fx(lambda x, w, b: torch.nn.functional.linear(x, w, b))(
            torch.randn(4, 3), lin.weight.detach(), lin.bias.detach())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hopctl_torch.to_proto(lifted)
        self.assertFalse([w for w in caught if "get_attr constants" in str(w.message)])


if __name__ == "__main__":
    unittest.main()
