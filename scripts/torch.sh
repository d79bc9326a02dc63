#!/usr/bin/env bash
# Runs a command inside the torch 2.x chroot of scripts/chroot.sh:
#
#   scripts/torch.sh 2.14 -- python3 -c 'import torch; print(torch.__version__)'
#
# The repository is bind-mounted at the same path inside the chroot and the
# command starts in the current directory (which must be inside the repo), so
# paths work unchanged. /proc, /dev and /tmp are mounted too. Every mount is
# made in a private mount namespace (unshare --mount) that exists only while
# the command runs: no mount can outlive it, even on SIGKILL, so the chroot is
# never left with the repo or a live /proc mounted in it.
#
# Environment passed in: PYTHONPATH, HOPCTL, HOPCTL_* and the few variables a
# test run needs; everything else is reset.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
v="${1:?usage: scripts/torch.sh VERSION -- COMMAND...}"; shift
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: scripts/torch.sh VERSION -- COMMAND..." >&2; exit 2; }
root="$("$here/scripts/chroot.sh" path "$v")"
cwd="$(pwd)"
case "$cwd/" in "$here"/*) ;; *) cwd="$here" ;; esac

envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
  TMPDIR=/tmp OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}")
while IFS='=' read -r k _; do
  case "$k" in PYTHONPATH|HOPCTL|HOPCTL_*|CI|TORCH_LOGS|TORCHDYNAMO_*) envs+=("$k=${!k}") ;; esac
done < <(env)

exec unshare --mount --propagation private -- /bin/bash -c '
set -e
root="$1"; repo="$2"; cwd="$3"; shift 3
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
# The repo last: a checkout under /tmp (as CI clones may be) would
# otherwise be hidden by the tmpfs.
mkdir -p "$root$repo"
mount --bind "$repo" "$root$repo"
exec chroot "$root" /usr/bin/env -i "$@"
' _ "$root" "$here" "$cwd" "${envs[@]}" /bin/sh -c 'cd "$0" && exec "$@"' "$cwd" "$@"
