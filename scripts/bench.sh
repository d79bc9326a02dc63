#!/usr/bin/env bash
# `make bench`: the ratio table of issue 38, then per-node cost across sizes.
#
#  scripts/bench.sh [ratios] [scaling] [report]   (default: ratios scaling)
#
#  ratios   each row the ratio of two commands run in turn in this one
#           invocation (python/tools/bench_cmd.py --over): median of RUNS
#           (default 7) pairwise ratios with their range, beside the floor
#           it divides by and its goal. Absolute times move with the
#           machine's load from one day to the next; a ratio measured in
#           pairs moves far less, so the goals are ratios.
#  scaling  Go benchmarks of each stage at 10k, 100k and 1M nodes (ns/node),
#           best of COUNT (default 3) runs, and per stage the ratio of the
#           largest to the smallest cost per node ("flat" is ≤ 1.5).
#  report   `hopctl report` of a 100k-node graph in headless Chromium.
#
# BENCHTIME (default 1s), COUNT, RUNS, SMALL_RUNS (default 30: the
# millisecond row), BENCH_DIR (keeps the generated graphs, otherwise in a
# temporary directory removed on exit).
set -euo pipefail
cd "$(dirname "$0")/.."
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

ratios() {
  local runs=${RUNS:-7} b=(python3 python/tools/bench_cmd.py)
  local g1m="$out/synth-1000000.pb" g100k="$out/synth-100000.pb" an="bin/hopctl analyze $out/synth-1000000.pb"
  # The floors: an empty static Go program (what any Go binary's start-up
  # costs) and protobuf-go's proto.Unmarshal of the same file.
  printf 'package main\n\nfunc main() {}\n' > "$out/empty.go"
  (cd "$out" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o empty empty.go)
  CGO_ENABLED=0 go build -trimpath -o "$out/unmarshal" ./internal/benchmarks/unmarshal
  [ -f "$g1m" ] || bin/hopctl synth -n 1000000 -o "$g1m"
  [ -f "$g100k" ] || bin/hopctl synth -n 100000 -o "$g100k"
  local joint=(joint --masks --partition mincut)
  echo "== ratios: A / B run in turn, median [range] of $runs pairs (${SMALL_RUNS:-30} for start-up); graphs: hopctl synth"
  "${b[@]}" --runs "${SMALL_RUNS:-30}" --over "$out/empty" --goal '≤1.5x' \
    --label "hopctl version / empty static Go program" -- bin/hopctl version
  "${b[@]}" --runs "$runs" --over "$out/unmarshal $g1m" --goal '≤0.5x' \
    --label "1M analyze / protobuf-go proto.Unmarshal" -- bin/hopctl analyze "$g1m"
  "${b[@]}" --runs "$runs" --over "$an" --rss --goal '≤3x' \
    --label "1M joint --masks --partition mincut / 1M analyze" -- \
    bin/hopctl "${joint[@]}" "$g1m" --fw-out "$out/fw.pb" --bw-out "$out/bw.pb"
  "${b[@]}" --runs "$runs" --over "$an" --goal '≤2x' --label "1M print / 1M analyze" -- bin/hopctl print "$g1m"
  "${b[@]}" --runs "$runs" --over "$an" --label "1M convert to JSON / 1M analyze" -- \
    bin/hopctl convert "$g1m" "$out/c1m.json"
  "${b[@]}" --runs "$runs" --per 10 --goal '≤1.5x' --label "joint per node: 1M / 100k" \
    --over "bin/hopctl ${joint[*]} $g100k --fw-out $out/fw100k.pb --bw-out $out/bw100k.pb" -- \
    bin/hopctl "${joint[@]}" "$g1m" --fw-out "$out/fw.pb" --bw-out "$out/bw.pb"
  # AOTAutograd's joint + min-cut of a 4.4k-node Linear/LayerNorm/GELU stack
  # over hopctl's whole command on the same graph (goal ≥ 500x); needs torch.
  if "$py" -c 'import torch' 2>/dev/null; then
    PYTHONWARNINGS=ignore PYTHONPATH=python "$py" python/tools/bench_aot.py --hopctl bin/hopctl --workdir "$out" --layers 400 --runs "$runs" \
      | sed -n 's/^ratio: \([0-9]*x\) (whole command).*/  4.4k-node stack: AOTAutograd joint+min-cut \/ hopctl whole command  \1  goal ≥500x/p'
  else
    echo "  4.4k-node stack: AOTAutograd / hopctl: skipped (no torch under $py)"
  fi
}

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

gobench() {
  go test "$1" -run='^$' -bench="$2" -benchtime="${BENCHTIME:-1s}" -count="${COUNT:-3}" | tee -a "$out/go-bench.txt" | summarize
}

scaling() {
  : > "$out/go-bench.txt"
  echo "== per-node cost at 10k, 100k, 1M: decode, verify, analyze, meta-diff (internal/benchmarks); best of ${COUNT:-3}"
  gobench ./internal/benchmarks/ .
  echo "== joint and partition (pkg/jointgraph): synthetic graphs at 10k/100k/1M, the 11k-node stack"
  gobench ./pkg/jointgraph/ 'Synth|JointMinCut'
  echo "  (raw output: $out/go-bench.txt$kept)"
}

report() {
  echo "== hopctl report: a 100k-node graph (synth --hops) in headless Chromium, ${REPORT_RUNS:-5} page loads"
  echo "   (ready: navigation start to interactive; expand: relayout after clicking a box; ms)"
  go test ./internal/cmd/report/ -run='^$' -bench=ReportInteractive -benchtime="${REPORT_RUNS:-5}x" -count=1 \
    | grep -E '^Benchmark|report of|SKIP' || true
}

sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(ratios scaling)
for s in "${sections[@]}"; do
  case $s in
  ratios | scaling | report) "$s"; echo ;;
  *) echo "unknown section $s (ratios, scaling, report)" >&2; exit 2 ;;
  esac
done
