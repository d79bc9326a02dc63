// Package cputime reads the processor time the process has used: on a
// shared, noisy machine a steadier measure of work than wall time. The
// benchmarks (internal/benchmarks, pkg/jointgraph) report it per node and
// the bad-input budget (internal/cli) checks it.
package cputime
