#!/bin/sh
# Runs every Go fuzz target in the module for the given time each
# (default 3s; `make fuzz FUZZTIME=10m` for long runs).
#
# Minimizing a new interesting input is capped at 2000 executions
# (FUZZMINIMIZE): Go's default is 60 s per input, and on the text-format
# seeds of FuzzLint, where nearly every byte removed stops the input from
# parsing, minimization took the whole minute each time while the
# progress line showed no executions — 416 in ten minutes.
set -eu
time=${1:-3s}
minimize=${FUZZMINIMIZE:-2000x}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u)
  for t in $targets; do
    echo "fuzz $pkg $t ($time)"
    go test "$pkg" -run='^$' -fuzz="^$t\$" -fuzztime="$time" -fuzzminimizetime="$minimize"
  done
done
