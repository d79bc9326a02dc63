#!/usr/bin/env bash
# Runs the Python test suite (python/tests) under every torch the project
# tests against: Debian's torch 1.13 on the host, then torch 2.6 and 2.14 in
# the chroots of scripts/chroot.sh (through scripts/torch.sh). Each part
# starts with a line naming the torch and Python it used (sid's torch moves:
# the log says which one a run proved), and the run ends with a summary.
#
#   scripts/pytest.sh              all three
#   scripts/pytest.sh 1.13 2.14    some of them ("1.13" is the host)
#
# Needs HOPCTL (the hopctl binary; make pytest sets it). With
# HOPCTL_NO_CHROOTS=1 the 2.x parts are reported as skipped; otherwise a
# missing chroot is an error (scripts/install-deps.sh builds them).
# Extra arguments for unittest come from PYTEST_ARGS (e.g. "-k roundtrip").
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
: "${HOPCTL:?set HOPCTL to the hopctl binary (make pytest does)}"
export HOPCTL PYTHONPATH=python
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(1.13 2.6 2.14)
# shellcheck disable=SC2206
extra=(${PYTEST_ARGS:-})
probe='import sys, torch; print("torch %s, Python %s" % (torch.__version__, sys.version.split()[0]))'

summary=()
status=0
for v in "${versions[@]}"; do
  if [ "$v" = 1.13 ]; then
    py="$(scripts/find-python.sh)"
    run=("$py")
  else
    if [ "${HOPCTL_NO_CHROOTS:-0}" = 1 ]; then
      echo "== torch $v: skipped (HOPCTL_NO_CHROOTS=1)"
      summary+=("torch $v: skipped (HOPCTL_NO_CHROOTS=1)")
      continue
    fi
    if ! scripts/chroot.sh path "$v" >/dev/null; then
      summary+=("torch $v: FAILED (no chroot)"); status=1; continue
    fi
    run=(scripts/torch.sh "$v" -- python3)
  fi
  which="$("${run[@]}" -c "$probe")" || { summary+=("torch $v: FAILED (no torch)"); status=1; continue; }
  echo "== python tests under $which"
  start=$(date +%s)
  if "${run[@]}" -m unittest discover -s python/tests -v "${extra[@]}"; then
    r=ok
  else
    r=FAILED; status=1
  fi
  summary+=("$which: $r ($(( $(date +%s) - start )) s)")
done
echo "== python tests, by torch:"
printf '   %s\n' "${summary[@]}"
exit $status
