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


class Report(dict):
    """hopctl's JSON document (a dict, as --format json writes it) that prints
    as hopctl's text report and renders as a table in Jupyter (_repr_html_)."""

    def _graphs(self):
        for f in self.get("files", []):
            for g in f.get("graphs", []):
                yield f, g

    def _findings(self):
        for f in self.get("files", []):
            for x in f.get("findings", []):
                yield f, x
            for g in f.get("graphs", []):
                for x in g.get("findings", []):
                    yield f, x

    @staticmethod
    def _named(g, indices):
        names = g.get("inputs", [])
        return ", ".join("%d (%s)" % (i, names[i]) if i < len(names) else str(i) for i in indices)

    @staticmethod
    def _pairs(m, src, dst):
        """An alias map as hopctl's text report prints it: {1 (y): 1 (unsqueeze)}."""
        def named(i, names):
            return "%d (%s)" % (i, names[i]) if 0 <= i < len(names) and names[i] else str(i)
        return "{" + ", ".join("%s: %s" % (named(int(k), src), named(v, dst)) for k, v in m.items()) + "}"

    @staticmethod
    def _provenance(m):
        """Where a write comes from, as hopctl's text report says it."""
        if "signature_output" in m:
            return "declared by the graph signature, output %d (%s)" % (m["signature_output"], m.get("kind", ""))
        return "node " + " → ".join(m.get("path") or [m.get("node", "")])

    def view_meta(self, graph=""):
        """AOTAutograd's view and mutation metadata of each file's graph
        (ViewAndMutationMeta's input_info and output_info, with torch's field
        names: docs/formats.md, view_meta): {path: view_meta}."""
        return {f.get("path"): g["view_meta"] for f, g in self._graphs()
                if g.get("name", "") == graph and "view_meta" in g}

    def mutations(self):
        """Every write the program makes to an input: (path, graph, input index, input name, provenance)."""
        return [(f.get("path"), g.get("name", ""), m["input"], m.get("name", ""), self._provenance(m))
                for f, g in self._graphs() for m in g.get("mutations", [])]

    def __str__(self):
        lines = []
        for f in self.get("files", []):
            lines.append(f.get("path", ""))
            if f.get("error"):
                lines.append("  error: " + f["error"])
            for g in f.get("graphs", []):
                lines.append("  graph %s (%d inputs, %d outputs)" % (g.get("name") or "<root>", len(g.get("inputs", [])), g.get("num_outputs", 0)))
                if "mutated_inputs" in g:
                    lines.append("    mutated_inputs: [%s]" % self._named(g, g["mutated_inputs"]))
                    for m in g.get("mutations", []):
                        lines.append("      %s: %s" % (self._named(g, [m["input"]]), self._provenance(m)))
                    ins, outs = g.get("inputs", []), g.get("outputs", [])
                    lines.append("    inp_inp_alias: %s  inp_out_alias: %s  out_out_alias: %s" % (
                        self._pairs(g.get("inp_inp_alias", {}), ins, ins), self._pairs(g.get("inp_out_alias", {}), ins, outs),
                        self._pairs(g.get("out_out_alias", {}), outs, outs)))
        findings = list(self._findings())
        if findings:
            lines.append("findings (%d):" % len(findings))
            for f, x in findings:
                where = "graph %s: node %s" % (x.get("graph") or "<root>", x.get("node", ""))
                lines.append("  %s: %s: %s: %s [%s]" % (x.get("severity"), f.get("path"), where, x.get("message", "").split("\n")[0], x.get("rule")))
                if x.get("help"):
                    lines.append("    help: %s" % x["help"])
        else:
            lines.append("no findings")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        import html
        rows = []
        for f, g in self._graphs():
            rows.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                html.escape(f.get("path", "")), html.escape(g.get("name") or "<root>"),
                html.escape("; ".join("%s: %s" % (self._named(g, [m["input"]]), self._provenance(m)) for m in g["mutations"])
                            if g.get("mutations") else self._named(g, g.get("mutated_inputs", []))),
                html.escape(str(g.get("inp_out_alias", {})))))
        out = ["<table><tr><th>file</th><th>graph</th><th>mutated inputs</th><th>input → output aliases</th></tr>"]
        out += rows
        out.append("</table>")
        findings = list(self._findings())
        if findings:
            out.append("<ul>")
            for f, x in findings:
                out.append("<li><b>%s</b> %s: node %s: %s <code>[%s]</code></li>" % (
                    html.escape(str(x.get("severity"))), html.escape(x.get("graph") or "<root>"), html.escape(x.get("node", "")),
                    html.escape(x.get("message", "")), html.escape(str(x.get("rule")))))
            out.append("</ul>")
        else:
            out.append("<p>no findings</p>")
        return "\n".join(out)


def analyze(obj, example_inputs=None):
    """hopctl analyze --format json on obj; returns the parsed document as a
    Report (a dict that prints as the text report)."""
    return Report(_run("analyze", obj, example_inputs, []))


def lint(obj, example_inputs=None, fail_on="none"):
    """hopctl lint --format json on obj; returns the parsed report as a Report
    (findings never raise)."""
    return Report(_run("lint", obj, example_inputs, ["--fail-on", fail_on]))
