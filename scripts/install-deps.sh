#!/usr/bin/env bash
# Installs everything hopctl's tests and demo need on a fresh Debian machine
# that has only Go, Node and apt, then checks that it is all usable and fails
# loudly if not. Idempotent: skips what is present. CI (.ci/run) runs it
# through `make test`; nothing may be installed by hand instead.
#
#  1. The host: Debian's torch 1.13 (under /usr/bin/python3) with torchvision,
#     protobuf, numpy and networkx (functorch's min-cut partitioner, the
#     oracle of python/tests/test_joint.py, imports networkx).
#  2. Two chroots with real torch 2.x, built by scripts/chroot.sh with
#     mmdebstrap from the same Debian mirror: trixie (torch 2.6) and sid
#     (torch 2.14). They live in $HOPCTL_CHROOTS (default
#     /var/cache/hopctl/chroots), outside the repo. HOPCTL_NO_CHROOTS=1 skips
#     them (the 2.x parts of `make test` then say they were skipped).
#  3. Microsoft's SARIF validator, @microsoft/sarif-multitool from npm, in
#     $HOPCTL_TOOLS/sarif-multitool (default /var/cache/hopctl/tools): the
#     SARIF tests of internal/cli run it with GitHub's rules. It is a
#     self-contained .NET program in the platform package
#     @microsoft/sarif-multitool-linux; the tests call that binary
#     directly, because the npm wrapper (bin.js) runs it through a shell,
#     which splits the argument "Sarif;Gh" at the semicolon.
#  4. Debian's chromium, for the tests that drive `hopctl report`'s page in
#     a real headless browser (internal/cmd/report), with a font.
#  5. The Go modules.
#  6. gcc, for the race detector's cgo (the Makefile's gotest-race).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
updated=0
apt_install() {
  if [ $updated = 0 ]; then $SUDO apt-get update -qq; updated=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -o=Dpkg::Use-Pty=0 --no-install-recommends "$@" >/dev/null
}

# Every Python module any test imports on the host, with the Debian package
# that provides it.
host_modules=(torch:python3-torch torchvision:python3-torchvision
  google.protobuf:python3-protobuf numpy:python3-numpy networkx:python3-networkx)
need=()
for mp in "${host_modules[@]}"; do
  /usr/bin/python3 -c "import ${mp%%:*}" 2>/dev/null || need+=("${mp#*:}")
done
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
# The race detector of `make test` (gotest-race) builds with cgo.
command -v gcc >/dev/null || need+=(gcc libc6-dev)
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}"; fi

# Check, after installing, that every module imports: a missing one fails
# here, loudly, not as errors deep in the test run.
missing=()
for mp in "${host_modules[@]}"; do
  /usr/bin/python3 -c "import ${mp%%:*}" 2>/dev/null || missing+=("${mp%%:*}")
done
# functorch's min-cut partitioner is what test_joint.py compares against.
/usr/bin/python3 -c 'from functorch.compile import min_cut_rematerialization_partition' 2>/dev/null \
  || missing+=(functorch.compile)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps.sh: after installing, /usr/bin/python3 cannot import: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps.sh: host torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"

if [ "${HOPCTL_NO_CHROOTS:-0}" != 1 ]; then
  for v in 2.6 2.14; do
    scripts/chroot.sh build "$v"
  done
fi

# Microsoft's SARIF validator (see 3. above). The version is pinned; the
# Makefile passes the binary's path to the tests (HOPCTL_SARIF_MULTITOOL).
sarif_version=5.7.0
tools="${HOPCTL_TOOLS:-/var/cache/hopctl/tools}"
multitool="$tools/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
mt_version() { DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "$multitool" --version 2>&1 | head -1 || true; }
if [[ "$(mt_version)" != "SARIF Multitool $sarif_version"* ]]; then
  command -v npm >/dev/null || apt_install npm
  $SUDO mkdir -p "$tools/sarif-multitool"
  $SUDO npm install --silent --no-audit --no-fund --prefix "$tools/sarif-multitool" "@microsoft/sarif-multitool@$sarif_version" >/dev/null
  # npm may skip the package's postinstall (chmod u+x) under its script policy.
  $SUDO chmod u+x "$multitool"
fi
if [[ "$(mt_version)" != "SARIF Multitool $sarif_version"* ]]; then
  echo "install-deps.sh: $multitool does not run (sarif-multitool $sarif_version)" >&2
  exit 1
fi
echo "install-deps.sh: $(mt_version)"
# Headless Chromium for the report's browser tests (chromedp drives it).
if ! command -v chromium >/dev/null; then
  apt_install chromium fonts-dejavu-core
fi
if ! chromium --version >/dev/null 2>&1; then
  echo "install-deps.sh: chromium is not usable after installing" >&2
  exit 1
fi
echo "install-deps.sh: $(chromium --version 2>/dev/null | head -1)"

go mod download

# 7. The wheel (make wheel, make pytest-wheel): Debian's setuptools and wheel
#    build it (there is no PyPI to fetch them from), venv and pip install it
#    into the tests' fresh environments, and pre-commit runs the hooks of
#    .pre-commit-hooks.yaml for real.
wheel_modules=(setuptools:python3-setuptools wheel:python3-wheel venv:python3-venv ensurepip:python3-venv pip:python3-pip)
need=()
for mp in "${wheel_modules[@]}"; do
  /usr/bin/python3 -c "import ${mp%%:*}" 2>/dev/null || need+=("${mp#*:}")
done
command -v pre-commit >/dev/null || need+=(pre-commit)
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}"; fi
for mp in "${wheel_modules[@]}"; do
  /usr/bin/python3 -c "import ${mp%%:*}" 2>/dev/null || { echo "install-deps.sh: /usr/bin/python3 cannot import ${mp%%:*}" >&2; exit 1; }
done
if ! pre-commit --version >/dev/null 2>&1; then
  echo "install-deps.sh: pre-commit is not usable after installing" >&2
  exit 1
fi
echo "install-deps.sh: $(pre-commit --version)"
