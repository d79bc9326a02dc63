#!/usr/bin/env bash
# `make bench`: the benchmark suite whose results the README records.
#  1. Go benchmarks of each stage at 10k, 100k and 1M nodes (ns/node), each
#     run COUNT times; the summary keeps each benchmark's best run (the
#     machine's noise only ever adds time) and, per stage, the ratio of the
#     largest to the smallest cost per node across sizes ("flat" ≤ 1.5);
#  2. end-to-end `hopctl analyze` runs: RUNS runs per size, wall time
#     (min and median) and peak memory (/usr/bin/time);
#  3. the side-by-side with AOTAutograd (python/tools/bench_aot.py);
#  4. `hopctl report` of a 100k-node graph in headless Chromium: time until
#     the page is interactive and time to expand a box (REPORT_RUNS runs).
#  4. whole commands as a user runs them (python/tools/bench_cmd.py): start-up
#     and resnet18-sized jobs net of spawning /bin/true, the 4.4k-node stack
#     beside AOTAutograd, every command at 1M nodes; `scripts/bench.sh whole`
#     runs only these, `scripts/bench.sh whole ROW...` only the rows named
#     (version analyze-resnet18 joint-resnet18 aot-4k joint-1m convert-json-1m
#     convert-pbtxt-1m print-1m analyze-1m).
# BENCHTIME (default 1s), COUNT (default 3), RUNS (default 5), SMALL_RUNS
# (default 50, the millisecond rows), BENCH_DIR; VS=OTHER_BINARY makes every
# whole-command row but aot-4k also run OTHER_BINARY alternately with
# bin/hopctl (bench_cmd.py --vs), a before/after under the same load; rows
# that write files give each binary its own ("{k}"), which each run replaces.
set -euo pipefail
cd "$(dirname "$0")/.."
# Without BENCH_DIR the generated graphs (1M nodes: hundreds of MB) and raw
# outputs go to a temporary directory removed on exit, however the script
# ends; set BENCH_DIR to keep them.
kept=""
if [ -n "${BENCH_DIR:-}" ]; then
  out=$BENCH_DIR
else
  kept=", removed on exit (set BENCH_DIR to keep it)"
  out=$(mktemp -d "${TMPDIR:-/tmp}/hopctl-bench-sh.XXXXXX")
  trap 'rm -rf -- "$out"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
fi
mkdir -p "$out"
make -s build
py=$(scripts/find-python.sh)

# whole ROW...: the whole-command rows of issue 18's table (all when none is
# named); medians over RUNS (SMALL_RUNS for the millisecond rows), ranges in
# brackets, peak RSS.
whole() {
  local rows=("$@") bench=(python3 python/tools/bench_cmd.py ${VS:+--vs "$VS"}) r18=testdata/models/resnet18.pb
  [ ${#rows[@]} -gt 0 ] || rows=(version analyze-resnet18 joint-resnet18 aot-4k joint-1m convert-json-1m convert-pbtxt-1m print-1m analyze-1m)
  echo "== whole commands (median [range], peak RSS; the first three net of spawning /bin/true)"
  for row in "${rows[@]}"; do
    case $row in
    version) "${bench[@]}" --runs "${SMALL_RUNS:-50}" --net --label "hopctl version (start-up)" -- bin/hopctl version ;;
    analyze-resnet18) "${bench[@]}" --runs "${SMALL_RUNS:-50}" --net --label "resnet18 analyze --format json" -- bin/hopctl analyze --format json "$r18" ;;
    joint-resnet18) "${bench[@]}" --runs "${SMALL_RUNS:-50}" --net --label "resnet18 joint --partition mincut -o --fw-out --bw-out" -- \
        bin/hopctl joint "$r18" --partition mincut -o "$out/r18-joint{k}.pb" --fw-out "$out/r18-fw{k}.pb" --bw-out "$out/r18-bw{k}.pb" ;;
    aot-4k) PYTHONPATH=python "$py" python/tools/bench_aot.py --hopctl bin/hopctl --workdir "$out" --layers 400 --runs "${SMALL_RUNS:-50}" ;;
    *-1m)
      local big="$out/synth-1000000.pb" plain="$out/synth-1000000-nohops.pb"
      [ -f "$big" ] || bin/hopctl synth -n 1000000 --hops -o "$big"
      case $row in
      joint-1m)
        [ -f "$plain" ] || bin/hopctl synth -n 1000000 -o "$plain"
        "${bench[@]}" --runs "${RUNS:-5}" --label "1M joint --partition mincut (synth, no HOPs)" -- \
          bin/hopctl joint "$plain" --partition mincut -o "$out/j1m{k}.pb" --fw-out "$out/fw1m{k}.pb" --bw-out "$out/bw1m{k}.pb" ;;
      convert-json-1m) "${bench[@]}" --runs "${RUNS:-5}" --label "1M convert to .json" -- bin/hopctl convert "$big" "$out/c1m{k}.json" ;;
      convert-pbtxt-1m) "${bench[@]}" --runs "${RUNS:-5}" --label "1M convert to .pbtxt" -- bin/hopctl convert "$big" "$out/c1m{k}.pbtxt" ;;
      print-1m) "${bench[@]}" --runs "${RUNS:-5}" --label "1M print" -- bin/hopctl print "$big" ;;
      analyze-1m) "${bench[@]}" --runs "${RUNS:-5}" --label "1M analyze --format json" -- bin/hopctl analyze --format json "$big" ;;
      *) echo "unknown row $row" >&2; return 2 ;;
      esac
      ;;
    *) echo "unknown row $row" >&2; return 2 ;;
    esac
  done
}

if [ "${1:-}" = whole ]; then
  shift
  whole "$@"
  exit
fi

# summarize reads `go test -bench` output and prints, per benchmark, the
# best ns/node (and cpu-ns/node when reported), then per stage the spread.
summarize() {
  awk '
    /^Benchmark/ {
      name = $1; sub(/-[0-9]+$/, "", name)
      for (i = 2; i < NF; i++) {
        if ($(i+1) == "ns/node" && (!(name in best) || $i < best[name])) best[name] = $i
        if ($(i+1) == "cpu-ns/node" && (!(name in cpu) || $i < cpu[name])) cpu[name] = $i
      }
      if (!(name in seen)) { seen[name] = 1; order[++n] = name }
    }
    END {
      for (k = 1; k <= n; k++) {
        name = order[k]
        if (!(name in best)) continue
        line = sprintf("  %-36s %8.0f ns/node", name, best[name])
        if (name in cpu) line = line sprintf("  %8.0f cpu-ns/node", cpu[name])
        print line
        stage = name; sub(/\/[^\/]*$/, "", stage)
        if (!(stage in lo) || best[name] < lo[stage]) lo[stage] = best[name]
        if (!(stage in hi) || best[name] > hi[stage]) hi[stage] = best[name]
        if (!(stage in sseen)) { sseen[stage] = 1; sorder[++m] = stage }
      }
      print "  flatness (largest / smallest ns per node across sizes):"
      for (k = 1; k <= m; k++) printf "    %-34s %.2fx\n", sorder[k], hi[sorder[k]] / lo[sorder[k]]
    }'
}

bench() {
  go test "$1" -run='^$' -bench="$2" -benchtime="${BENCHTIME:-1s}" -count="${COUNT:-3}" | tee -a "$out/go-bench.txt" | summarize
}

: > "$out/go-bench.txt"
echo "== Go benchmarks: decode, verify, analyze, meta-diff (internal/benchmarks); best of ${COUNT:-3}"
bench ./internal/benchmarks/ .
echo
echo "== joint and partition (pkg/jointgraph): synthetic graphs at 10k/100k/1M, the 11k-node stack"
bench ./pkg/jointgraph/ 'Synth|JointMinCut'
echo "  (raw output: $out/go-bench.txt$kept)"

echo
echo "== hopctl analyze --format json, end to end (binary synthetic graphs with HOPs), ${RUNS:-5} runs"
printf '  %-8s %10s %10s %12s\n' nodes min_s median_s peak_MiB
for n in 10000 100000 1000000; do
  f="$out/synth-$n.pb"
  [ -f "$f" ] || bin/hopctl synth -n "$n" --hops -o "$f"
  : > "$out/time-$n.txt"
  for _ in $(seq "${RUNS:-5}"); do
    /usr/bin/time -f '%e %M' -a -o "$out/time-$n.txt" bin/hopctl analyze --format json "$f" >/dev/null
  done
  sort -n "$out/time-$n.txt" | awk -v n="$n" '
    { w[NR] = $1; if ($2 > rss) rss = $2 }
    END { printf "  %-8s %10.2f %10.2f %12.0f\n", n, w[1], w[int((NR + 1) / 2)], rss / 1024 }'
done

echo
echo "== joint + min-cut partition: hopctl vs AOTAutograd (same graph, one run)"
PYTHONPATH=python "$py" python/tools/bench_aot.py --hopctl bin/hopctl --workdir "$out"

echo
echo "== hopctl report: a 100k-node graph (synth --hops) in headless Chromium, ${REPORT_RUNS:-5} page loads"
echo "   (ready: navigation start to interactive; expand: relayout after clicking a box; ms)"
go test ./internal/cmd/report/ -run='^$' -bench=ReportInteractive -benchtime="${REPORT_RUNS:-5}x" -count=1 \
  | tee -a "$out/go-bench.txt" | grep -E '^Benchmark|report of|SKIP' || true

echo
whole
