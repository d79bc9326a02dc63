#!/bin/sh
# Runs every Go fuzz target in the module for the given time each
# (default 3s; `make fuzz FUZZTIME=10m` for long runs).
set -eu
time=${1:-3s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u)
  for t in $targets; do
    echo "fuzz $pkg $t ($time)"
    go test "$pkg" -run='^$' -fuzz="^$t\$" -fuzztime="$time"
  done
done
