"""invoke_subgraph as torch 2.14 writes it, with Dynamo's
inline_single_use_invoke_subgraph on (the default: a region called once is
inlined) and off, with grad enabled and disabled.

    scripts/torch.sh 2.14 -- env PYTHONPATH=python HOPCTL=$PWD/bin/hopctl \\
        python3 -m unittest python/tests/test_invoke_subgraph.py

The region writes its input (torch.compiler.nested_compile_region; Dynamo
allows invoke_subgraph input mutation). For each setting torch must compile
the program; the AOT graph must carry an invoke_subgraph call exactly when
the setting keeps the region; hopctl lint must report no HOP finding on the
Dynamo and AOT graphs (torch accepted them); and hopctl analyze's four
results on every invoke_subgraph subgraph must equal torch's
check_input_alias_and_mutation on the same subgraph, run on the live AOT
graph.
"""

import json
import os
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


def hopctl():
    exe = os.environ.get("HOPCTL")
    if not exe or not os.access(exe, os.X_OK):
        raise AssertionError("HOPCTL must name the hopctl binary (make pytest sets it)")
    return exe


def _supported():
    try:
        import torch._higher_order_ops.utils as u
        return (hasattr(torch.compiler, "nested_compile_region")
                and hasattr(torch._dynamo.config, "inline_single_use_invoke_subgraph")
                and hasattr(u, "check_input_alias_and_mutation_return_outputs"))
    except Exception:
        return False


@unittest.skipUnless(_supported(), "torch %s lacks nested_compile_region's inlining switch" % torch.__version__)
class InvokeSubgraphBothSettings(unittest.TestCase):
    def run_setting(self, inline, grad):
        from functorch.compile import make_boxed_func
        from torch._functorch.aot_autograd import aot_module_simplified
        from torch._higher_order_ops.utils import check_input_alias_and_mutation_return_outputs as chk

        @torch.compiler.nested_compile_region
        def region(x, y):
            x.add_(1)
            return (x * y).sin()

        tmp = tempfile.mkdtemp()
        files, oracle = [], {}

        def backend(gm, example_inputs):
            p = os.path.join(tmp, "dynamo.pb")
            hopctl_torch.export(gm, p, grad_enabled=grad)
            files.append(p)

            def compiler(kind):
                def compile_graph(g, _):
                    q = os.path.join(tmp, kind + ".pb")
                    hopctl_torch.export(g, q, grad_enabled=grad)
                    files.append(q)
                    for name, m in g.named_modules():
                        if name and isinstance(m, torch.fx.GraphModule):
                            ii, io, oo, mut = chk(m)[:4]
                            oracle[(q, name)] = {
                                "inp_inp_alias": {str(k): v for k, v in ii.items()},
                                "inp_out_alias": {str(k): v for k, v in io.items()},
                                "out_out_alias": {str(k): v for k, v in oo.items()},
                                "mutated_inputs": list(mut)}
                    return make_boxed_func(g.forward)
                return compile_graph
            return aot_module_simplified(gm, example_inputs, fw_compiler=compiler("forward"),
                                         bw_compiler=compiler("backward"), inference_compiler=compiler("inference"))

        torch._dynamo.reset()
        x, y = torch.randn(3), torch.randn(3)
        want_x = x + 1
        with torch._dynamo.config.patch(inline_single_use_invoke_subgraph=inline), torch.set_grad_enabled(grad):
            torch.compile(lambda x, y: region(x, y) * 2, backend=backend, fullgraph=True)(x, y)
        self.assertTrue(torch.equal(x, want_x), "the region's write reached the caller")
        aot = [f for f in files if not f.endswith("dynamo.pb")]
        self.assertTrue(aot)
        for f in files:
            gm = hopctl_torch.load(f)
            n = sum(1 for m in gm.modules() for node in getattr(m, "graph", torch.fx.Graph()).nodes
                    if node.op == "call_function" and "invoke_subgraph" in str(node.target))
            if f in aot:
                self.assertEqual(n > 0, not inline, "%s: %d invoke_subgraph calls with inlining %s" % (f, n, inline))
            r = subprocess.run([hopctl(), "lint", "--format", "json", f], capture_output=True, text=True)
            self.assertIn(r.returncode, (0, 1), r.stderr)
            hop = [x for fl in json.loads(r.stdout)["files"] for x in fl.get("findings", [])
                   if x["rule"].startswith("hop-")]
            self.assertEqual(hop, [], "%s: torch accepted it" % f)
        if inline:
            return
        self.assertTrue(oracle, "no subgraph to compare")
        for (path, name), want in oracle.items():
            r = subprocess.run([hopctl(), "analyze", "--format", "json", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            graphs = {g["name"]: g for g in json.loads(r.stdout)["files"][0]["graphs"]}
            got = {k: graphs[name][k] for k in want}
            self.assertEqual(got, want, "%s: %s" % (path, name))

    def test_inlined(self):
        self.run_setting(True, True)
        self.run_setting(True, False)

    def test_kept(self):
        self.run_setting(False, True)
        self.run_setting(False, False)


if __name__ == "__main__":
    unittest.main()
