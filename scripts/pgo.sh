#!/usr/bin/env bash
# `make pgo`: regenerates cmd/hopctl/default.pgo, the CPU profile that
# `go build` uses for profile-guided optimisation of hopctl (it reads
# default.pgo in the main package's directory by default: `make build`,
# `go build ./cmd/hopctl` and `go install` all use it).
#
# The profile is that of the commands the README's Performance section
# measures, on inputs this script makes or the repository holds, so that
# anyone regenerates the same workload: the joint with the min-cut
# partition of a 1M-node synthetic graph (twice) and of a 100k-node one
# with HOPs (three times), analyze, convert to .json and .pbtxt and print
# of a 1M-node graph with HOPs, and analyze and the partitioned joint of
# every model in testdata/models (ten times each: they are short). The
# binary profiled is built without a profile (-pgo=off), so the result does
# not depend on the profile it replaces. Profiles are sampled (100 Hz), so
# two runs give different files; regenerate after changes that move where
# the time goes (docs/performance-log.md, "Thirteenth pass", has what the
# profile bought when it was made).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/hopctl-pgo.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

go=${GO:-go}
h=$work/hopctl
CGO_ENABLED=0 "$go" build -pgo=off -o "$h" ./cmd/hopctl
"$h" synth -n 1000000 -o "$work/plain-1m.pb"
"$h" synth -n 1000000 --hops -o "$work/hops-1m.pb"
"$h" synth -n 100000 --hops -o "$work/hops-100k.pb"

n=0
# prof ARGS...: one run of hopctl ARGS with a CPU profile of its own.
# Exit code 1 (findings) is a normal outcome of analyze.
prof() {
  n=$((n + 1))
  local code=0
  HOPCTL_CPUPROFILE="$work/$n.pprof" "$h" "$@" >/dev/null || code=$?
  if [ "$code" -gt 1 ]; then
    echo "pgo.sh: hopctl $* exited $code" >&2
    exit 1
  fi
}
joint() { prof joint "$1" --partition mincut -o "$work/j.pb" --fw-out "$work/fw.pb" --bw-out "$work/bw.pb"; }

for _ in 1 2; do joint "$work/plain-1m.pb"; done
for _ in 1 2 3; do joint "$work/hops-100k.pb"; done
prof analyze --format json "$work/hops-1m.pb"
prof convert "$work/hops-1m.pb" "$work/c.json"
prof convert "$work/hops-1m.pb" "$work/c.pbtxt"
prof print "$work/hops-1m.pb"
for m in testdata/models/*.pb; do
  for _ in $(seq 10); do
    prof analyze --format json "$m"
    joint "$m"
  done
done

"$go" tool pprof -proto "$work"/*.pprof > "$work/default.pgo"
mv -f "$work/default.pgo" cmd/hopctl/default.pgo
echo "cmd/hopctl/default.pgo: $n profiles merged ($(wc -c < cmd/hopctl/default.pgo) bytes)"
