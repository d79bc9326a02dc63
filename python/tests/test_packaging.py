"""Packaging without the wheel: pip install of python/ alone, and the binary's version check (run: make pytest).

make pytest-install (test_wheel.py) installs the wheel and the checkout.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import hopctl_torch
from hopctl_torch import _run

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)


def _have_pip():
    return subprocess.run([sys.executable, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def _have_setuptools():
    return subprocess.run([sys.executable, "-c", "import setuptools, wheel"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


@unittest.skipUnless(_have_pip() and _have_setuptools(), "no pip, setuptools or wheel for this interpreter")
class PackagingTest(unittest.TestCase):
    def test_pip_install_without_go_source_says_why(self):
        # python/ copied out of its checkout: the binary cannot be built,
        # and pip must say what to do instead of installing a package whose
        # analyze() cannot run.
        with tempfile.TemporaryDirectory(prefix="hopctl_pip_") as d:
            src = os.path.join(d, "src")
            shutil.copytree(PYROOT, src, ignore=shutil.ignore_patterns("tests", "tools", "__pycache__", "*.egg-info", "build"))
            target = os.path.join(d, "site")
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                                "--target", target, src],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=d)
            self.assertNotEqual(p.returncode, 0, p.stdout)
            self.assertIn("is not in a hopctl checkout (no ../go.mod)", p.stdout)
            self.assertIn("make wheel", p.stdout)
            self.assertFalse(os.path.exists(os.path.join(target, "hopctl_torch")))


def _fake_hopctl(d, version):
    """A hopctl that reports version (as `hopctl version --format json` does)."""
    path = os.path.join(d, "hopctl")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho '{\"version\": \"%s\", \"format_version\": \"1.1\"}'\n" % version)
    os.chmod(path, 0o755)
    return path


@unittest.skipIf(os.name == "nt", "the fake hopctl is a shell script")
class BinaryVersionTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="hopctl_ver_")
        self.addCleanup(shutil.rmtree, self.d)
        self.addCleanup(_run._checked.clear)
        old = os.environ.get("HOPCTL")
        self.addCleanup(lambda: os.environ.__setitem__("HOPCTL", old) if old is not None else os.environ.pop("HOPCTL", None))

    def test_mismatch_is_an_error(self):
        os.environ["HOPCTL"] = _fake_hopctl(self.d, "9.9.9")
        with self.assertRaises(hopctl_torch.HopctlVersionError) as e:
            _run.binary()
        msg = str(e.exception)
        self.assertIn("is hopctl 9.9.9, but hopctl_torch is %s" % hopctl_torch.__version__, msg)
        self.assertIn("must match", msg)

    def test_same_version_is_used(self):
        os.environ["HOPCTL"] = _fake_hopctl(self.d, hopctl_torch.__version__)
        self.assertEqual(_run.binary(), os.environ["HOPCTL"])

    def test_source_checkout_bundles_nothing(self):
        # PYTHONPATH=python: a hopctl in the interpreter's scripts was not
        # installed with this copy of the package, and $HOPCTL decides.
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(_run.PKG), "setup.py")))
        self.assertIsNone(_run.bundled())

    def test_none_found(self):
        os.environ.pop("HOPCTL", None)
        old = os.environ["PATH"]
        self.addCleanup(os.environ.__setitem__, "PATH", old)
        os.environ["PATH"] = self.d
        with self.assertRaises(FileNotFoundError) as e:
            _run.binary()
        self.assertIn("install a hopctl_torch wheel", str(e.exception))


if __name__ == "__main__":
    unittest.main()
