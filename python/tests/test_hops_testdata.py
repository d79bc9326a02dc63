"""testdata/hops against the torch running now: every traced file is traced again.

    scripts/torch.sh 2.14 -- env PYTHONPATH=python python3 -m unittest python/tests/test_hops_testdata.py

python/tools/hops_testdata.py traces every program of testdata/hops that
PyTorch can trace and derives its `# expect` and `# want` lines from torch
(its static check, its runtime observation, its functionalization verdict).
Here every program is traced again in the running torch:

* the expectations derived now must equal the committed file's: the Go tests
  that read the files (pkg/analyze/passes/alias, pkg/lint) then check hopctl
  against what this torch says;
* on the torch the files were made with (the version each file records), the
  whole file must equal a fresh export, so a committed file is never stale;
* every file of testdata/hops is either traced here or listed as
  hand-written, with the PyTorch test it mirrors in its header.

Skipped on torch 1.13 (no HOPs) and on torches without
check_input_alias_and_mutation_return_outputs (2.6).
"""

import os
import re
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

HOPS = os.path.join(REPO, "testdata", "hops")


def _supported():
    try:
        import torch._higher_order_ops.utils as u
        return hasattr(torch, "cond") and hasattr(u, "check_input_alias_and_mutation_return_outputs")
    except Exception:
        return False


def _directives(text):
    return [ln for ln in text.splitlines() if ln.startswith("# expect ") or ln.startswith("# want ")]


@unittest.skipUnless(_supported(), "torch %s has no check_input_alias_and_mutation (2.14 has)" % torch.__version__)
class HopsTestdataMatchesTorch(unittest.TestCase):
    def test_every_file_traced_or_cited(self):
        import hops_testdata
        traced = {name for name, *_ in hops_testdata.PROGRAMS}
        files = {f[:-len(".pbtxt")] for f in os.listdir(HOPS) if f.endswith(".pbtxt")}
        self.assertGreaterEqual(len(traced), 12)
        self.assertEqual(files, traced | set(hops_testdata.HANDWRITTEN))
        for name, (test, _, _) in hops_testdata.HANDWRITTEN.items():
            with self.subTest(file=name):
                with open(os.path.join(HOPS, name + ".pbtxt")) as f:
                    head = "".join(ln for ln in f if ln.startswith("#"))
                self.assertIn("test/functorch/test_control_flow.py " + test, head.replace("\n# ", " "),
                              "a hand-written file cites the PyTorch test it mirrors")
                self.assertIn("Hand-written", head)

    def test_handwritten_programs_still_refused(self):
        """Each hand-written file stays only while torch refuses its program,
        and torch's message matches the file's want lines."""
        import hops_testdata
        for name in hops_testdata.HANDWRITTEN:
            with self.subTest(file=name):
                msg = hops_testdata.refusal(name)
                self.assertIsNotNone(msg, "torch traces it now: make the file a real trace")
                with open(os.path.join(HOPS, name + ".pbtxt")) as f:
                    wants = [re.match(r'# want graph=\S+ node=\S+ "(.*)"$', ln) for ln in f if ln.startswith("# want ")]
                self.assertTrue(wants)
                for w in wants:
                    self.assertRegex(msg, w.group(1))

    def test_files_equal_a_fresh_trace(self):
        import hops_testdata
        with tempfile.TemporaryDirectory() as tmp:
            for name, *_ in hops_testdata.PROGRAMS:
                with self.subTest(file=name):
                    fresh = hops_testdata.write(tmp, name)
                    with open(os.path.join(HOPS, name + ".pbtxt")) as f:
                        committed = f.read()
                    self.assertEqual(_directives(fresh), _directives(committed),
                                     "torch %s derives other expectations" % torch.__version__)
                    self.assertTrue(_directives(fresh), "no expect line")
                    made = re.search(r'^torch_version: "([^"]*)"', committed, re.M).group(1)
                    if made == torch.__version__:
                        self.assertEqual(fresh, committed, "stale: regenerate with python/tools/hops_testdata.py")


if __name__ == "__main__":
    unittest.main()
