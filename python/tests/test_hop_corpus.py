"""hopctl against torch's own HOP checks, on PyTorch's control-flow programs.

Runs in a torch 2.x chroot (torch 1.13 has no HOPs: skipped there):

    scripts/torch.sh 2.14 -- env PYTHONPATH=python HOPCTL=$PWD/bin/hopctl \\
        python3 -m unittest python/tests/test_hop_corpus.py

Every program of python/tools/hop_corpus.py is traced again in this torch;
torch's check_input_alias_and_mutation_return_outputs runs on every HOP
subgraph of the trace, and hopctl analyze's four results on the exported
file must equal it (except the deliberate differences listed in
pkg/analyze/passes/alias/hopcorpus_test.go). On the torch version the
committed corpus (testdata/hops_real) was made with, the verdicts must equal
the committed ones, so the Go tests that read them are not stale.
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
REPO = os.path.dirname(PYROOT)
for p in (os.path.join(PYROOT, "tools"), PYROOT):
    if p not in sys.path:
        sys.path.insert(0, p)

DELIBERATE = {("nested_mutate", "true_graph_0")}


def hopctl():
    exe = os.environ.get("HOPCTL")
    if not exe or not os.access(exe, os.X_OK):
        raise AssertionError("HOPCTL must name the hopctl binary (make pytest sets it)")
    return exe


@unittest.skipUnless(hasattr(torch, "cond"), "torch %s has no HOPs" % torch.__version__)
class HOPCorpusMatchesTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Traced in a fresh interpreter: tests that ran before in this
        # process (torch.export, Dynamo) leave global state behind — shape
        # environments, Dynamo caches — under which torch 2.14's
        # functionalization of these programs fails differently ("vr must
        # not be None for symbol s12") than it does on its own.
        cls.tmp = tempfile.TemporaryDirectory()
        env = dict(os.environ, PYTHONPATH=PYROOT)
        subprocess.run([sys.executable, os.path.join(PYROOT, "tools", "hop_corpus.py"), cls.tmp.name],
                       check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
        with open(os.path.join(cls.tmp.name, "verdicts.json")) as f:
            cls.verdicts = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_four_results_equal_torch(self):
        import torch._higher_order_ops.utils as u
        if not hasattr(u, "check_input_alias_and_mutation_return_outputs"):
            self.skipTest("torch %s has no check_input_alias_and_mutation (2.14 has)" % torch.__version__)
        progs = self.verdicts["programs"]
        paths = [os.path.join(self.tmp.name, n + ".pb") for n in sorted(progs) if "subgraphs" in progs[n]]
        self.assertGreaterEqual(len(paths), 20)
        r = subprocess.run([hopctl(), "analyze", "--format", "json"] + paths, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        checked = 0
        for f in doc["files"]:
            name = os.path.basename(f["path"])[:-3]
            graphs = {g["name"]: g for g in f["graphs"]}
            for q, want in progs[name]["subgraphs"].items():
                with self.subTest(program=name, graph=q):
                    got = {k: graphs[q][k] for k in want}
                    if (name, q) in DELIBERATE:
                        self.assertNotEqual(got, want, "agrees now: drop the deliberate difference")
                        continue
                    self.assertEqual(got, want)
                    checked += 1
        self.assertGreater(checked, 25)

    def test_committed_verdicts_current(self):
        d = os.path.join(REPO, "testdata", "hops_real")
        if self.verdicts["torch_version"].startswith("2.6"):
            d = os.path.join(d, "torch2.6")
        with open(os.path.join(d, "verdicts.json")) as f:
            committed = json.load(f)
        if committed["torch_version"] != self.verdicts["torch_version"]:
            self.skipTest("corpus made with torch %s, this is %s" % (committed["torch_version"], self.verdicts["torch_version"]))
        self.assertEqual(committed["programs"], self.verdicts["programs"])


@unittest.skipUnless(hasattr(torch, "cond"), "torch %s has no HOPs" % torch.__version__)
class DynamoCorpusMatchesTorch(unittest.TestCase):
    """The Dynamo-level corpus (python/tools/hop_corpus_dynamo.py) compiled
    again in this torch: torch.compile's verdicts in both grad modes equal
    the committed ones, which the Go test TestRealHOPCorpusDynamoGradMode
    holds hopctl to, and hopctl reports each refusal on the fresh graphs."""

    def test_committed_verdicts_current(self):
        d = os.path.join(REPO, "testdata", "hops_real", "dynamo")
        if torch.__version__.startswith("2.6"):
            d = os.path.join(REPO, "testdata", "hops_real", "torch2.6", "dynamo")
        with open(os.path.join(d, "verdicts.json")) as f:
            committed = json.load(f)
        if committed["torch_version"] != torch.__version__.split("+")[0]:
            self.skipTest("corpus made with torch %s, this is %s" % (committed["torch_version"], torch.__version__))
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, PYTHONPATH=PYROOT)
            subprocess.run([sys.executable, os.path.join(PYROOT, "tools", "hop_corpus_dynamo.py"), tmp],
                           check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
            with open(os.path.join(tmp, "verdicts.json")) as f:
                fresh = json.load(f)
            self.assertEqual(committed["programs"], fresh["programs"])
            refused = [n for n, v in fresh["programs"].items()
                       if v["compile"] != "ok" and os.path.exists(os.path.join(tmp, n + ".pb"))]
            self.assertGreaterEqual(len(refused), 4)
            # lint runs every check (analyze: alias/mutation only); exit 1: findings.
            r = subprocess.run([hopctl(), "lint", "--format", "json"] + [os.path.join(tmp, n + ".pb") for n in sorted(refused)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stderr)
            for f in json.loads(r.stdout)["files"]:
                name = os.path.basename(f["path"])[:-3]
                msgs = [x["message"] for x in f.get("findings", [])]
                with self.subTest(program=name):
                    self.assertIn(fresh["programs"][name]["compile"]["message"], msgs)


if __name__ == "__main__":
    unittest.main()
