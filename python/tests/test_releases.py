"""The releases corpus (testdata/releases) against the torch running it.

Runs in each torch 2.x chroot (torch 1.13 has no torch.cond: skipped):

    scripts/torch.sh 2.6 -- env PYTHONPATH=python HOPCTL=$PWD/bin/hopctl \\
        python3 -m unittest python/tests/test_releases.py

Every program of python/tools/make_releases.py is exported again by this
torch: its verdict must be the one verdicts.json records for this release
(so the Go tests that read it, TestReleasesAgainstTorch and
TestVersionTableRows, are not stale), and `hopctl lint --torch-version`
this release must refuse the committed graph exactly when this torch
refused the program.
"""

import json
import os
import subprocess
import sys
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
REPO = os.path.dirname(PYROOT)
DIR = os.path.join(REPO, "testdata", "releases")
sys.path.insert(0, os.path.join(PYROOT, "tools"))

import make_releases  # noqa: E402


def hopctl():
    exe = os.environ.get("HOPCTL")
    if not exe or not os.access(exe, os.X_OK):
        raise AssertionError("HOPCTL must name the hopctl binary (make pytest sets it)")
    return exe


@unittest.skipUnless(hasattr(torch, "cond"), "torch %s has no torch.cond" % torch.__version__)
class ReleasesMatchTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(DIR, "verdicts.json")) as f:
            cls.verdicts = json.load(f)["programs"]

    def test_verdicts_and_hopctl(self):
        v = make_releases.VERSION
        checked = 0
        for name, cls in make_releases.PROGRAMS.items():
            with self.subTest(program=name):
                recorded = self.verdicts.get(name, {}).get(v)
                if recorded is None:
                    self.skipTest("verdicts.json has no torch %s verdicts" % v)
                torch.manual_seed(0)
                try:
                    torch.export.export(cls(), (torch.randn(2, 3),))
                    verdict = "ok"
                except Exception as e:  # the refusal is the verdict
                    verdict = {"type": type(e).__name__, "message": make_releases._message(e)}
                self.assertEqual(verdict, recorded, "torch %s's verdict changed: rerun make testdata-releases" % v)
                r = subprocess.run([hopctl(), "lint", "--torch-version", v, "--format", "json",
                                    os.path.join(DIR, name + ".pt2")], capture_output=True, text=True)
                self.assertIn(r.returncode, (0, 1), r.stderr)
                findings = json.loads(r.stdout)["files"][0]["findings"]
                refused = verdict != "ok"
                self.assertEqual(bool(findings), refused,
                                 "torch %s %s it; hopctl reports %s" % (v, "refuses" if refused else "accepts",
                                                                        [f["message"] for f in findings]))
                checked += 1
        self.assertEqual(checked, len(make_releases.PROGRAMS))


if __name__ == "__main__":
    unittest.main()
