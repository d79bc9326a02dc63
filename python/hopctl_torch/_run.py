"""Run the hopctl binary on a graph and return its JSON report.

    report = hopctl_torch.analyze(ep)          # ExportedProgram, GraphModule or a file path
    report = hopctl_torch.lint(gm, example_inputs=inputs)

The binary is ``$HOPCTL`` when set, else ``hopctl`` on ``PATH``. An object is
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
import tempfile


class HopctlError(RuntimeError):
    """hopctl refused the input (exit 3) or the invocation (exit 2)."""

    def __init__(self, returncode, stderr):
        self.returncode = returncode
        self.stderr = stderr
        super().__init__("hopctl exited with %d: %s" % (returncode, stderr.strip()))


def binary():
    """Path of the hopctl binary: $HOPCTL, else hopctl on PATH."""
    b = os.environ.get("HOPCTL") or shutil.which("hopctl")
    if not b:
        raise FileNotFoundError("hopctl binary not found: set HOPCTL or put hopctl on PATH")
    return b


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
