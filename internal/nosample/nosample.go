// Package nosample turns off the runtime's heap profile sampling at start.
//
// By default the runtime records the stack of one allocation in every
// 512 KiB allocated on average (runtime.MemProfileRate), for a heap
// profile that a program may write; each record walks the stack and
// hashes it into a table built on first use. hopctl writes a heap profile
// only when HOPCTL_MEMPROFILE asks for one (internal/cli, which then sets
// its own rate), yet the sampling ran in every command: 2.4 % of the
// processor samples of a resnet18 `joint --partition mincut` with three
// outputs and 2.8 % of its `analyze --format json` (perf record -g over
// 200 and 300 runs; most samples are of the large buffers the decoder and
// the encoders allocate, which sampling by size nearly always records).
//
// The package imports only the runtime, so Go initialises it as soon as
// its import path comes up in order (Go 1.21: the ready packages by path),
// before every hopctl package and the libraries sorted after it, though
// after the standard library and libraries such as github.com/google's;
// cmd/hopctl imports it for this effect (TestHeapProfileSamplingOff).
package nosample

import "runtime"

func init() { runtime.MemProfileRate = 0 }
