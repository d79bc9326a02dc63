#!/usr/bin/env bash
# `make bench`: the benchmark suite whose results the README records.
#  1. Go benchmarks of each stage at 10k, 100k and 1M nodes (ns/node);
#  2. end-to-end CLI runs with wall time and peak memory (/usr/bin/time -v);
#  3. the side-by-side with AOTAutograd, when python/tools/bench_aot.py exists.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_DIR:-$(mktemp -d)}
make -s build

echo "== Go benchmarks (internal/benchmarks)"
go test ./internal/benchmarks/ -run='^$' -bench=. -benchtime="${BENCHTIME:-5x}" -count=1 | grep -E 'Benchmark|ok'
echo
echo "== joint and partition (pkg/jointgraph): the 11k-node stack, synthetic graphs at 10k/100k/1M"
go test ./pkg/jointgraph/ -run='^$' -bench=. -benchtime="${BENCHTIME:-5x}" -count=1 | grep -E 'Benchmark|ok'

echo
echo "== hopctl analyze end to end (binary synthetic graphs with HOPs)"
printf '%-8s %10s %10s %12s\n' nodes wall_s user_s peak_MiB
for n in 10000 100000 1000000; do
  f="$out/synth-$n.pb"
  [ -f "$f" ] || bin/hopctl synth -n "$n" --hops -o "$f"
  /usr/bin/time -v bin/hopctl analyze --format json "$f" >/dev/null 2>"$out/time-$n.txt"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out/time-$n.txt" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  user=$(awk -F': ' '/User time/ {print $2}' "$out/time-$n.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$out/time-$n.txt")
  printf '%-8s %10s %10s %12s\n' "$n" "$wall" "$user" "$rss"
done

if [ -f python/tools/bench_aot.py ]; then
  echo
  echo "== joint + min-cut partition: hopctl vs AOTAutograd (same graph, one run)"
  PYTHONPATH=python "$(scripts/find-python.sh)" python/tools/bench_aot.py --hopctl bin/hopctl --workdir "$out"
fi
