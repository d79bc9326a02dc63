"""The repository's .pre-commit-hooks.yaml under a real pre-commit (run: make pytest-install).

A scratch project uses this checkout (copied and committed, as pre-commit
clones a hook repository at a rev) in its .pre-commit-config.yaml and runs
`pre-commit run` on what it staged: each hook must pass on a clean graph,
fail naming the rule on one with a finding, skip files that are not graphs
and leave unstaged files alone. hopctl-lint builds hopctl with Go
(HOPCTL_GO), offline from the module cache; hopctl-lint-system runs $HOPCTL.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LINT = os.path.join(ROOT, "testdata", "lint")
GO = os.environ.get("HOPCTL_GO")
HOPCTL = os.environ.get("HOPCTL")
PRE_COMMIT = shutil.which("pre-commit")


def _git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _hook_repo(d):
    """This checkout's tree, committed in a fresh repository (what pre-commit
    clones at rev), without testdata and build outputs; returns (path, rev)."""
    repo = os.path.join(d, "hopctl")

    def ignore(p, names):
        skip = {"__pycache__"}
        if os.path.samefile(p, ROOT):
            skip |= {".git", "bin", "dist", "testdata"}
        elif os.path.samefile(p, os.path.join(ROOT, "python")):
            skip |= {"build"} | {n for n in names if n.endswith(".egg-info")}
        return [n for n in names if n in skip]

    shutil.copytree(ROOT, repo, ignore=ignore)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hopctl")
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    return repo, rev


@unittest.skipUnless(PRE_COMMIT, "pre-commit is not installed (scripts/install-deps.sh installs Debian's)")
class PreCommitTest(unittest.TestCase):
    def run_hook(self, hook, env):
        with tempfile.TemporaryDirectory(prefix="hopctl_precommit_") as d:
            repo, rev = _hook_repo(d)
            proj = os.path.join(d, "project")
            os.makedirs(os.path.join(proj, "graphs"))
            with open(os.path.join(proj, ".pre-commit-config.yaml"), "w") as f:
                f.write("repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: %s\n" % (repo, rev, hook))
            shutil.copy(os.path.join(LINT, "hop-input-mutation_ok.pbtxt"), os.path.join(proj, "graphs", "ok.pbtxt"))
            with open(os.path.join(proj, "package.json"), "w") as f:
                f.write('{"name": "not a graph"}\n')
            _git(proj, "init", "-q")
            env = dict(env, PRE_COMMIT_HOME=os.path.join(d, "cache"))
            env.pop("PYTHONPATH", None)

            def pre_commit():
                return subprocess.run([PRE_COMMIT, "run"], cwd=proj, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

            # A clean graph and a JSON file that is no graph, staged; a graph
            # with a finding that is not staged.
            shutil.copy(os.path.join(LINT, "hop-input-mutation.pbtxt"), os.path.join(proj, "graphs", "unstaged.pbtxt"))
            _git(proj, "add", ".pre-commit-config.yaml", "graphs/ok.pbtxt", "package.json")
            p = pre_commit()
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertRegex(p.stdout, r"hopctl lint.*Passed")

            # The graph with a finding, staged.
            shutil.copy(os.path.join(LINT, "hop-input-mutation.pbtxt"), os.path.join(proj, "graphs", "bad.pbtxt"))
            _git(proj, "add", "graphs/bad.pbtxt")
            p = pre_commit()
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertRegex(p.stdout, r"hopctl lint.*Failed")
            self.assertIn("graphs/bad.pbtxt: graph <root>: node cond: error: cond_true might be modifying the input! "
                          "[hop-input-mutation]", p.stdout)
            self.assertNotIn("unstaged.pbtxt", p.stdout)
            self.assertIn("1 finding (1 error) in 2 files", p.stdout)

    @unittest.skipUnless(GO, "HOPCTL_GO unset (make pytest-install sets it to the go command)")
    def test_golang_hook(self):
        # pre-commit builds the hook with `go install ./...` under a GOPATH
        # of its own; the module cache is the machine's, read offline.
        cache = subprocess.run([GO, "env", "GOMODCACHE", "GOCACHE"], check=True, stdout=subprocess.PIPE, text=True).stdout.split()
        env = dict(os.environ, GOMODCACHE=cache[0], GOCACHE=cache[1], GOPROXY="off", GOFLAGS="-mod=mod",
                   GOTOOLCHAIN="local", PATH=os.path.dirname(GO) + os.pathsep + os.environ["PATH"])
        env.pop("HOPCTL", None)
        self.run_hook("hopctl-lint", env)

    @unittest.skipUnless(HOPCTL, "HOPCTL unset (make pytest-install sets it to bin/hopctl)")
    def test_system_hook(self):
        # Only $HOPCTL's directory supplies a hopctl.
        bindir = tempfile.mkdtemp(prefix="hopctl_bin_")
        self.addCleanup(shutil.rmtree, bindir)
        os.symlink(os.path.abspath(HOPCTL), os.path.join(bindir, "hopctl"))
        path = [bindir] + [p for p in os.environ["PATH"].split(os.pathsep) if not os.path.exists(os.path.join(p, "hopctl"))]
        self.run_hook("hopctl-lint-system", dict(os.environ, PATH=os.pathsep.join(path)))


if __name__ == "__main__":
    unittest.main()
