"""Run the hopctl binary on a graph and return its JSON report.

    report = hopctl_torch.analyze(ep)          # ExportedProgram, GraphModule or a file path
    report = hopctl_torch.lint(gm, example_inputs=inputs)

The binary is the one installed with this package (a hopctl_torch wheel carries
it in its scripts), else ``$HOPCTL``, else ``hopctl`` on ``PATH``; its version
must be this package's (``hopctl version`` = ``hopctl_torch.__version__``),
checked on first use. An object is
written to a temporary .pb file with ``export`` first (an ExportedProgram keeps
its graph signature); a path (``.pt2``, ``.pb``, ``.json``, ``.pbtxt``) is passed
as it is. The result is the parsed ``--format json`` document (see README.md:
``hopctl analyze``'s schema_version 1 document, ``hopctl lint``'s report).
Exit codes 0 and 1 (findings) return the report; 2 and 3 raise HopctlError with
hopctl's message.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from ._common import __version__


class HopctlError(RuntimeError):
    """hopctl refused the input (exit 3) or the invocation (exit 2)."""

    def __init__(self, returncode, stderr):
        self.returncode = returncode
        self.stderr = stderr
        super().__init__("hopctl exited with %d: %s" % (returncode, stderr.strip()))


class HopctlVersionError(RuntimeError):
    """The hopctl binary found is not the version of this package."""


EXE = "hopctl.exe" if os.name == "nt" else "hopctl"
PKG = os.path.dirname(os.path.abspath(__file__))


def bundled():
    """The hopctl installed with this package, or None.

    pip puts a wheel's scripts in the scripts directory of the scheme it
    installs into: the interpreter's (a venv's bin), the user's (--user), or
    DIR/bin beside DIR/hopctl_torch (--target DIR). A source checkout
    (PYTHONPATH=python) has none: whatever is in those directories was not
    installed with it.
    """
    if os.path.exists(os.path.join(os.path.dirname(PKG), "setup.py")):
        return None
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    user = sysconfig.get_preferred_scheme("user") if hasattr(sysconfig, "get_preferred_scheme") else os.name + "_user"
    dirs.append(sysconfig.get_path("scripts", user))
    dirs.append(os.path.join(os.path.dirname(PKG), "bin"))
    for d in dirs:
        b = os.path.join(d, EXE)
        if os.path.isfile(b) and os.access(b, os.X_OK):
            return b
    return None


_checked = {}


def binary():
    """Path of the hopctl binary: the bundled one, else $HOPCTL, else hopctl on PATH.

    Raises FileNotFoundError if there is none, HopctlVersionError if its
    version is not __version__.
    """
    b = bundled() or os.environ.get("HOPCTL") or shutil.which("hopctl")
    if not b:
        raise FileNotFoundError(
            "hopctl binary not found: install a hopctl_torch wheel, which carries it (docs/install.md), "
            "or set HOPCTL to a hopctl %s, or put one on PATH" % __version__)
    if b not in _checked:
        _checked[b] = _version(b)
    if _checked[b] != __version__:
        raise HopctlVersionError(
            "%s is hopctl %s, but hopctl_torch is %s: the two are released together and must match. "
            "Reinstall the hopctl_torch wheel (which carries its hopctl), or point HOPCTL at a hopctl %s "
            "(`make build` in the checkout of hopctl_torch)" % (b, _checked[b], __version__, __version__))
    return b


def _version(b):
    """The version hopctl at path b reports (hopctl version --format json)."""
    try:
        p = subprocess.run([b, "version", "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise FileNotFoundError("hopctl binary %s does not run: %s" % (b, e)) from e
    if p.returncode != 0:
        raise HopctlError(p.returncode, p.stderr)
    return json.loads(p.stdout)["version"]


def _run(command, obj, example_inputs, args):
    from ._export import export
    with tempfile.TemporaryDirectory(prefix="hopctl_torch_") as d:
        if isinstance(obj, (str, os.PathLike)):
            path = os.fspath(obj)
        else:
            path = os.path.join(d, "graph.pb")
            export(obj, path, example_inputs=example_inputs)
        p = subprocess.run([binary(), command, path, "--format", "json", *args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        raise HopctlError(p.returncode, p.stderr)
    return json.loads(p.stdout)


def analyze(obj, example_inputs=None):
    """hopctl analyze --format json on obj; returns the parsed document."""
    return _run("analyze", obj, example_inputs, [])


def lint(obj, example_inputs=None, fail_on="none"):
    """hopctl lint --format json on obj; returns the parsed report (findings never raise)."""
    return _run("lint", obj, example_inputs, ["--fail-on", fail_on])
