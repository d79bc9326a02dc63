"""The wheel and the checkout install hopctl with hopctl_torch (run: make pytest-install).

Each test makes a fresh venv of this interpreter with its site packages
(Debian's torch, setuptools and wheel; there is no PyPI to install from) and
pip-installs into it offline, Debian's packages meeting the requirements
(torch, protobuf):

- the wheel `make wheel` wrote (HOPCTL_WHEEL_DIR), with no Go on PATH: the
  binary must come from the wheel;
- a copy of the checkout's tree (python/ and the Go source), with Go
  (HOPCTL_GO): setup.py builds the binary.

Then hopctl runs from the venv's PATH, on a torch.export archive of
testdata/pt2, and hopctl_torch.analyze runs it on a traced module.
"""

import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
with open(os.path.join(ROOT, "python", "hopctl_torch", "VERSION")) as f:
    VERSION = f.read().strip()
WHEEL_DIR = os.environ.get("HOPCTL_WHEEL_DIR")
GO = os.environ.get("HOPCTL_GO")
ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine().lower())

# hopctl_torch.analyze on a module that writes an input and returns a view of
# it: the report must say so, from the binary the venv's package finds.
ANALYZE = r"""
import json, os, torch, hopctl_torch
from torch.fx.experimental.proxy_tensor import make_fx
def f(x, y):
    x.add_(y)
    return x.view(-1), y * 2
x, y = torch.randn(2, 3), torch.randn(2, 3)
gm = make_fx(f)(x.clone(), y)
r = hopctl_torch.analyze(gm, example_inputs=(x.clone(), y))
print(json.dumps({"package": hopctl_torch.__file__, "version": hopctl_torch.__version__,
                  "binary": hopctl_torch._run.binary(), "root": r["files"][0]["graphs"][0]}))
"""


def _path_without_go():
    """PATH with every directory that has a go command left out."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not os.path.exists(os.path.join(d, "go"))]
    return os.pathsep.join(dirs)


def _not_in_a_clone(d, names):
    """What copytree leaves out of a copy of the checkout: what git ignores
    or does not ship, and testdata (the build does not read it)."""
    skip = {"__pycache__"}
    if os.path.samefile(d, ROOT):
        skip |= {".git", "bin", "dist", "testdata"}
    elif os.path.samefile(d, os.path.join(ROOT, "python")):
        skip |= {"build"} | {n for n in names if n.endswith(".egg-info")}
    return [n for n in names if n in skip]


class Venv:
    def __init__(self, d, path):
        self.dir = os.path.join(d, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", self.dir], check=True)
        self.bin = os.path.join(self.dir, "bin")
        # Nothing of the checkout or the caller's hopctl may leak in.
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HOPCTL", "VIRTUAL_ENV")}
        self.env.update(PATH=self.bin + os.pathsep + path, PIP_NO_INDEX="1",
                        PIP_DISABLE_PIP_VERSION_CHECK="1")
        self.cwd = d

    def run(self, *args):
        return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=self.env, cwd=self.cwd)


class InstallTest(unittest.TestCase):
    def check_installed(self, venv):
        hopctl = os.path.join(venv.bin, "hopctl")
        self.assertEqual(shutil.which("hopctl", path=venv.env["PATH"]), hopctl)

        p = venv.run("hopctl", "version", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(json.loads(p.stdout)["version"], VERSION)

        # A torch.export archive: the graphs hopctl finds are those torch
        # recorded when it wrote the archive (make_pt2.py's expect.json).
        archive = os.path.join(ROOT, "testdata", "pt2", "2.14", "cond.aten.pt2")
        with open(os.path.join(os.path.dirname(archive), "expect.json")) as f:
            want = sorted(json.load(f)["cond.aten"]["nodes"])
        p = venv.run("hopctl", "analyze", archive, "--format", "json")
        self.assertEqual(p.returncode, 0, p.stdout)
        got = sorted(g["name"] for g in json.loads(p.stdout)["files"][0]["graphs"])
        self.assertEqual(got, want)

        # The bundled binary comes before $HOPCTL (which does not exist).
        venv.env["HOPCTL"] = os.path.join(venv.cwd, "no-such-hopctl")
        p = venv.run(os.path.join(venv.bin, "python"), "-c", ANALYZE)
        del venv.env["HOPCTL"]
        self.assertEqual(p.returncode, 0, p.stdout)
        r = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertTrue(r["package"].startswith(venv.dir), r["package"])
        self.assertEqual(r["binary"], hopctl)
        self.assertEqual(r["version"], VERSION)
        self.assertEqual(r["root"]["mutated_inputs"], [0])
        self.assertEqual(r["root"]["inp_out_alias"], {"0": 0})

    @unittest.skipUnless(WHEEL_DIR, "HOPCTL_WHEEL_DIR unset (make pytest-install builds the wheel and sets it)")
    def test_wheel_without_go(self):
        wheels = glob.glob(os.path.join(WHEEL_DIR, "hopctl_torch-%s-py3-none-manylinux_2_17_%s.*.whl" % (VERSION, ARCH)))
        self.assertEqual(len(wheels), 1, "want one wheel for %s in %s: %s" % (ARCH, WHEEL_DIR, os.listdir(WHEEL_DIR)))
        with tempfile.TemporaryDirectory(prefix="hopctl_wheel_") as d:
            path = _path_without_go()
            self.assertIsNone(shutil.which("go", path=path))
            venv = Venv(d, path)
            p = venv.run("pip", "install", wheels[0])
            self.assertEqual(p.returncode, 0, p.stdout)
            self.check_installed(venv)

    @unittest.skipUnless(GO, "HOPCTL_GO unset (make pytest-install sets it to the go command)")
    def test_checkout_with_go(self):
        with tempfile.TemporaryDirectory(prefix="hopctl_checkout_") as d:
            # A copy, as a fresh clone is: pip builds in the source tree,
            # and nothing of an earlier build may be in it.
            src = os.path.join(d, "src")
            shutil.copytree(ROOT, src, ignore=_not_in_a_clone)
            path = os.path.dirname(GO) + os.pathsep + _path_without_go()
            venv = Venv(d, path)
            p = venv.run("pip", "install", "--no-build-isolation", os.path.join(src, "python"))
            self.assertEqual(p.returncode, 0, p.stdout)
            self.check_installed(venv)


if __name__ == "__main__":
    unittest.main()
