"""hopctl_torch's build: the package, with the hopctl binary in the wheel.

Python tools built on a compiled core (ruff, uv) ship the executable in a
platform wheel's scripts (`<name>.data/scripts/`), which pip installs on PATH
beside the interpreter; this does the same. The binary is built from the Go
source of the checkout this directory is in, for GOOS/GOARCH as `go env`
reports them (so `GOARCH=arm64` cross-compiles), and the wheel is tagged for
that platform. The metadata is in setup.cfg; see there why there is no
pyproject.toml.

    make wheel                      # dist/hopctl_torch-<version>-py3-none-<platform>.whl
    pip install ./python            # from a checkout, with Go on PATH
"""

import os
import shutil
import subprocess

from setuptools import setup
from distutils.command.build_scripts import build_scripts  # setuptools has no subclass of its own
from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODULE = "github.com/hopctl/hopctl"
with open(os.path.join(HERE, "hopctl_torch", "VERSION")) as f:
    VERSION = f.read().strip()

# Wheel platform tags by Go target. With CGO_ENABLED=0 the binary links no
# libc at all, so it runs on any glibc; manylinux_2_17 (manylinux2014) is
# the oldest tag with an aarch64 variant, and its legacy alias is for pips
# older than 20.3 (PEP 600).
PLATFORMS = {
    ("linux", "amd64"): "manylinux_2_17_x86_64.manylinux2014_x86_64",
    ("linux", "arm64"): "manylinux_2_17_aarch64.manylinux2014_aarch64",
}

NO_GO = """\
hopctl_torch ships the hopctl binary, which is built from the Go source of
this checkout, and there is no Go toolchain here ({why}). Either:
  - install Go {go} or newer (https://go.dev/dl/, or `apt-get install golang`
    where it is new enough), put it on PATH (or set GO=/path/to/go) and
    run pip again; or
  - build the wheel where Go is (`make wheel`, or `make wheel GOARCH=arm64`
    for arm64) and `pip install dist/hopctl_torch-{version}-*.whl` here:
    installing the wheel needs no Go."""


def _go_directive():
    with open(os.path.join(ROOT, "go.mod")) as f:
        for line in f:
            if line.startswith("go "):
                return line.split()[1]
    return "1.x"


def _go():
    """The go command, or SystemExit saying what to do without one."""
    if not os.path.exists(os.path.join(ROOT, "go.mod")):
        raise SystemExit("hopctl_torch: %s is not in a hopctl checkout (no ../go.mod): the binary "
                         "cannot be built from here. Install a wheel (`make wheel` in a checkout "
                         "writes one), or pip install the checkout's python/ directory." % HERE)
    go = os.environ.get("GO") or shutil.which("go")
    if not go or not shutil.which(go):
        why = "GO=%s is not a command" % go if go else "no `go` on PATH"
        raise SystemExit(NO_GO.format(why=why, go=_go_directive(), version=VERSION))
    return go


def _target(go):
    out = subprocess.run([go, "env", "GOOS", "GOARCH"], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE, text=True).stdout.split()
    return tuple(out)


class BuildHopctl(build_scripts):
    """Builds hopctl (static: CGO_ENABLED=0; -trimpath; stripped; VERSION
    linked in) into the directory install_scripts copies to the wheel's
    .data/scripts."""

    def run(self):
        go = _go()
        target = _target(go)
        if target not in PLATFORMS:
            raise SystemExit("hopctl_torch: no wheel platform tag for GOOS=%s GOARCH=%s (known: %s)"
                             % (target + (", ".join("/".join(t) for t in PLATFORMS),)))
        self.mkpath(self.build_dir)
        out = os.path.abspath(os.path.join(self.build_dir, "hopctl"))
        ldflags = "-s -w -X %s/internal/build.Version=%s" % (MODULE, VERSION)
        cmd = [go, "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/hopctl"]
        self.announce("building hopctl %s for %s/%s: %s" % ((VERSION,) + target + (" ".join(cmd),)), level=2)
        subprocess.run(cmd, cwd=ROOT, check=True, env=dict(os.environ, CGO_ENABLED="0"))
        os.chmod(out, 0o755)

    def get_source_files(self):
        return []  # sdist: the binary's source is the checkout, not this package


class PlatformWheel(bdist_wheel):
    """A wheel for the binary's platform, for any Python 3: the Python code
    is pure, the binary depends on no Python ABI."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return "py3", "none", PLATFORMS.get(_target(_go()), "any")


# "hopctl" names the one script, which BuildHopctl builds rather than copies
# from a file; listing it makes build and install run the scripts commands.
setup(scripts=["hopctl"], cmdclass={"build_scripts": BuildHopctl, "bdist_wheel": PlatformWheel})
