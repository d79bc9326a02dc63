#!/usr/bin/env bash
# The torch 2.x chroots the tests run in (Debian's python3-torch from trixie
# and sid, with the python3-torchvision each suite builds against its own
# torch — 0.21 for 2.6, 0.27 for 2.14 — built with mmdebstrap from the mirror
# apt already uses).
#
#   scripts/chroot.sh build VERSION   build the chroot for torch VERSION (2.6 or
#                                     2.14) unless it is already complete
#   scripts/chroot.sh path VERSION    print its directory (exit 1 if not built)
#   scripts/chroot.sh list            the versions that are built, one a line
#
# Running a command in one is scripts/torch.sh.
#
# Directory: $HOPCTL_CHROOTS (default /var/cache/hopctl/chroots), one folder a
# version. A chroot is built in VERSION.tmp and renamed when complete, so a
# half-built one is never used. The build never leaves a mount behind:
# mmdebstrap and the checks run in private mount namespaces (unshare --mount)
# whose mounts die with them.
# Safety: nothing here copies or deletes a chroot that has anything mounted in
# it (torch.sh's mounts live in a private mount namespace that dies with the
# command, so none outlives it); `rm -rf` of a stale VERSION.tmp checks
# /proc/self/mountinfo first.
set -euo pipefail

ROOT="${HOPCTL_CHROOTS:-/var/cache/hopctl/chroots}"
MIRROR="${HOPCTL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES=python3-torch,python3-torchvision,python3-protobuf,python3-numpy,python3-networkx,python3-setuptools,python3-yaml

suite_of() {
  case "$1" in
    2.6) echo trixie ;;
    2.14) echo sid ;;
    *) echo "chroot.sh: unknown torch version '$1' (2.6 or 2.14)" >&2; exit 2 ;;
  esac
}

mounted_under() { # prints mount points at or below $1
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
}

cmd="${1:-}"; shift || true
case "$cmd" in
  path)
    v="${1:?version}"; suite_of "$v" >/dev/null
    [ -f "$ROOT/$v/.hopctl-ready" ] || { echo "chroot.sh: torch $v chroot not built (scripts/chroot.sh build $v)" >&2; exit 1; }
    echo "$ROOT/$v" ;;
  list)
    for d in "$ROOT"/*/; do [ -f "$d.hopctl-ready" ] && basename "$d"; done 2>/dev/null || true ;;
  build)
    v="${1:?version}"; suite="$(suite_of "$v")"
    dir="$ROOT/$v"
    stamp="packages=$PACKAGES suite=$suite"
    if [ -f "$dir/.hopctl-ready" ] && [ "$(head -1 "$dir/.hopctl-ready")" = "$stamp" ]; then
      echo "chroot.sh: torch $v chroot ready: $dir ($(sed -n 2p "$dir/.hopctl-ready"))"
      exit 0
    fi
    if [ "$(id -u)" != 0 ]; then echo "chroot.sh: building a chroot needs root" >&2; exit 1; fi
    command -v mmdebstrap >/dev/null || { echo "chroot.sh: mmdebstrap missing (apt-get install mmdebstrap)" >&2; exit 1; }
    mkdir -p "$ROOT"
    tmp="$dir.tmp"
    for d in "$tmp" "$dir"; do
      if [ -e "$d" ]; then
        if [ -n "$(mounted_under "$d")" ]; then
          echo "chroot.sh: refusing to remove $d: something is mounted in it:" >&2
          mounted_under "$d" >&2; exit 1
        fi
      fi
    done
    rm -rf --one-file-system "$tmp"
    echo "chroot.sh: building the torch $v chroot ($suite) in $dir ..."
    start=$(date +%s)
    # Debian's Release files for trixie/sid can look expired to this machine's
    # clock: do not check their Valid-Until.
    # mmdebstrap mounts /proc, /sys and /dev in the chroot while it works; run
    # it in a private mount namespace so an interrupted build cannot leave
    # them mounted.
    unshare --mount --propagation private -- mmdebstrap --quiet --variant=minbase --include="$PACKAGES" \
      --aptopt='Acquire::Check-Valid-Until "false"' \
      --aptopt='APT::Install-Recommends "false"' \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      "$suite" "$tmp" "deb $MIRROR $suite main"
    # Check it in a private mount namespace with /proc mounted (torch reads
    # /proc/cpuinfo); the mount dies with the namespace.
    inchroot() {
      unshare --mount --propagation private -- /bin/sh -c \
        'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$tmp" "$@"
    }
    tv="$(inchroot /usr/bin/python3 -c 'import torch; print("TORCH_VERSION=" + torch.__version__)' 2>/dev/null \
      | sed -n 's/^TORCH_VERSION=//p' || true)"
    case "$tv" in
      "$v".*) ;;
      *) echo "chroot.sh: the $suite chroot has torch '${tv:-none}', expected $v.x" >&2; exit 1 ;;
    esac
    for m in google.protobuf numpy networkx torchvision; do
      inchroot /usr/bin/python3 -c "import $m" 2>/dev/null || { echo "chroot.sh: torch $v chroot cannot import $m" >&2; exit 1; }
    done
    printf '%s\ntorch %s\n' "$stamp" "$tv" > "$tmp/.hopctl-ready"
    if [ -e "$dir" ]; then rm -rf --one-file-system "$dir"; fi
    mv "$tmp" "$dir"
    echo "chroot.sh: torch $tv chroot built in $(( $(date +%s) - start )) s: $dir" ;;
  *)
    echo "usage: scripts/chroot.sh build|path VERSION | list" >&2; exit 2 ;;
esac
