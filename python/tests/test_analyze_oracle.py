"""`hopctl analyze` against real torch: for every real model exported from
this torch (corpus.model_path: testdata/models for 1.13,
testdata/models-torch2.14 for 2.14, fresh exports otherwise), hopctl's four
results for the root graph equal what torch observes when it runs the same
graph on real tensors (alias_oracle.py)."""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python", "tools"))
sys.path.insert(0, os.path.join(REPO, "python"))

import alias_oracle  # noqa: E402
import corpus  # noqa: E402
import hopctl_torch  # noqa: E402


def hopctl():
    exe = os.environ.get("HOPCTL")
    if not exe or not os.path.exists(exe):
        raise RuntimeError("set HOPCTL to the hopctl binary (make pytest does)")
    return exe


class AnalyzeMatchesTorch(unittest.TestCase):
    def test_every_model(self):
        names = list(corpus.NAMES)
        self.assertGreaterEqual(len(names), 6)
        paths = [corpus.model_path(n) for n in names]
        proc = subprocess.run([hopctl(), "analyze", "--format", "json"] + paths,
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = json.loads(proc.stdout)
        self.assertEqual(doc["schema_version"], 1)
        by_path = {f["path"]: f for f in doc["files"]}
        seen = {"mutates": 0, "inp_out": 0, "out_out": 0, "inp_inp": 0}
        for name, path in zip(names, paths):
            with self.subTest(model=name):
                root = [g for g in by_path[path]["graphs"] if g["name"] == ""][0]
                want = alias_oracle.observe(hopctl_torch.load(path), corpus.make_inputs(name))
                got = {k: root[k] for k in ("inp_inp_alias", "inp_out_alias", "out_out_alias")}
                got["mutated_inputs"] = sorted(set(root["mutated_inputs"]))  # the runtime sees no write counts
                self.assertEqual(got, want)
                unknown = [f for f in root["findings"] if f["rule"] == "unknown-op"]
                self.assertEqual(unknown, [], "every op of a real model has a schema")
                seen["mutates"] += bool(want["mutated_inputs"])
                seen["inp_out"] += bool(want["inp_out_alias"])
                seen["out_out"] += bool(want["out_out_alias"])
                seen["inp_inp"] += bool(want["inp_inp_alias"])
        # The corpus must exercise every result, or this test proves little.
        for k, v in seen.items():
            self.assertGreater(v, 0, "no model in the corpus shows " + k)


if __name__ == "__main__":
    unittest.main()
