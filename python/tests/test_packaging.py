"""`pip install ./python` works offline with the setuptools already installed (run: make pytest)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)


def _have_pip():
    return subprocess.run([sys.executable, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


@unittest.skipUnless(_have_pip(), "no pip for this interpreter")
class PackagingTest(unittest.TestCase):
    def test_pip_install_offline(self):
        with tempfile.TemporaryDirectory(prefix="hopctl_pip_") as d:
            src = os.path.join(d, "src")
            shutil.copytree(PYROOT, src, ignore=shutil.ignore_patterns("tests", "tools", "__pycache__", "*.egg-info", "build"))
            target = os.path.join(d, "site")
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", target, src],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=d)
            self.assertEqual(p.returncode, 0, p.stdout)
            code = "import hopctl_torch, sys; print(hopctl_torch.__file__); hopctl_torch.analyze; hopctl_torch._ep.is_exported_program"
            q = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, PYTHONPATH=target), cwd=d)
            self.assertEqual(q.returncode, 0, q.stdout)
            self.assertTrue(q.stdout.startswith(target), q.stdout)
            for sub in ("_proto/hopctl/v1/graph_pb2.py", "_ep.py", "_run.py"):
                self.assertTrue(os.path.exists(os.path.join(target, "hopctl_torch", sub)), sub)


if __name__ == "__main__":
    unittest.main()
