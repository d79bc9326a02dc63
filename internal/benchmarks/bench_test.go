// Package benchmarks holds hopctl's benchmark suite (`make bench`): each
// stage of the main jobs on synthetic graphs (pkg/synth) of 10k, 100k and
// 1M nodes, reporting ns/node so per-node cost can be compared across
// sizes. Results and how they were measured are in the README.
package benchmarks

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/cputime"
	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/metadiff"
	"github.com/hopctl/hopctl/pkg/analyze/passes/alias"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/load"
	"github.com/hopctl/hopctl/pkg/synth"
)

var sizes = []int{10_000, 100_000, 1_000_000}

var (
	filesMu  sync.Mutex
	files    = map[int]string{}
	filesDir string // the temporary directory of files; TestMain removes it
)

// TestMain removes the generated graphs (1M nodes: hundreds of MB) when
// the benchmarks end, as scripts/bench.sh removes its own.
func TestMain(m *testing.M) {
	code := m.Run()
	if filesDir != "" {
		if err := os.RemoveAll(filesDir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// graphFile returns a binary synthetic graph of about n nodes with HOPs,
// generated into a temporary directory on the first benchmark of that
// size in the run (a run of the 10k benchmarks alone does not wait for
// the 1M-node graph, nor pay for its garbage).
func graphFile(b *testing.B, n int) string {
	filesMu.Lock()
	defer filesMu.Unlock()
	if path, ok := files[n]; ok {
		return path
	}
	if filesDir == "" {
		dir, err := os.MkdirTemp("", "hopctl-bench")
		if err != nil {
			b.Fatal(err)
		}
		filesDir = dir
	}
	path := filepath.Join(filesDir, fmt.Sprintf("synth-%d.pb", n))
	if err := cmdutil.SaveModule(path, synth.Generate(synth.Options{Nodes: n, Seed: 1, HOPs: true})); err != nil {
		b.Fatal(err)
	}
	files[n] = path
	return path
}

func nodes(m *ir.Module) int {
	total := 0
	for _, g := range m.Graphs {
		total += len(g.Nodes)
	}
	return total
}

// cpuStart is the process's CPU time when the running benchmark began
// (after its input file was generated).
var cpuStart time.Duration

// startCPU starts a benchmark's processor-time count (cpuStart) after
// collecting the garbage that generating its input left and returning
// the freed memory to the kernel: otherwise the first benchmark of a run
// pays for that collection, sweep and scavenging, which the run's later
// benchmarks do not.
func startCPU() {
	debug.FreeOSMemory()
	cpuStart = cputime.Process()
}

// perNode reports wall and CPU time per node of a benchmark over n nodes.
func perNode(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
	b.ReportMetric(float64((cputime.Process()-cpuStart).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/node")
}

func forSizes(b *testing.B, fn func(b *testing.B, path string)) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) { p := graphFile(b, n); startCPU(); fn(b, p) })
	}
}

func BenchmarkDecode(b *testing.B) {
	forSizes(b, func(b *testing.B, path string) {
		var n int
		for b.Loop() {
			m, err := ir.LoadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			n = nodes(m)
		}
		perNode(b, n)
	})
}

func BenchmarkVerify(b *testing.B) {
	forSizes(b, func(b *testing.B, path string) {
		m, err := ir.LoadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := ir.Verify(m, path); err != nil {
				b.Fatal(err)
			}
		}
		perNode(b, nodes(m))
	})
}

func BenchmarkAnalyze(b *testing.B) {
	forSizes(b, func(b *testing.B, path string) {
		m, err := ir.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		reg, err := load.Registry(m, path)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := analyze.Run(m, path, reg, alias.Analyzer); err != nil {
				b.Fatal(err)
			}
		}
		perNode(b, nodes(m))
	})
}

// BenchmarkAnalyzeFile is the whole `hopctl analyze` job in process, as
// the command does it (load.Analyze): decode, verify, then validation
// against the schemas beside the alias analysis.
func BenchmarkAnalyzeFile(b *testing.B) {
	forSizes(b, func(b *testing.B, path string) {
		var n int
		for b.Loop() {
			f, _, err := load.Analyze(path, alias.Analyzer)
			if err != nil {
				b.Fatal(err)
			}
			n = nodes(f.Module)
		}
		perNode(b, n)
	})
}

// BenchmarkMetaDiff compares the values of every node of two synthetic
// graphs with different op mixes (seeds 1 and 2): a list as long as the
// graph, with many differing pairs to describe.
func BenchmarkMetaDiff(b *testing.B) {
	values := func(m *ir.Module) []*ir.Value {
		var out []*ir.Value
		for _, g := range m.Graphs {
			for i := range g.Nodes {
				out = append(out, g.Nodes[i].Val)
			}
		}
		return out
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			lhs := metadiff.List{Name: "lhs", Values: values(synth.Generate(synth.Options{Nodes: n, Seed: 1, HOPs: true}))}
			rhs := metadiff.List{Name: "rhs", Values: values(synth.Generate(synth.Options{Nodes: n, Seed: 2, HOPs: true}))}
			startCPU()
			var diffs int
			for b.Loop() {
				diffs = len(metadiff.Compare(lhs, rhs, metadiff.Options{}).Pairs)
			}
			if diffs == 0 {
				b.Fatal("the two graphs should differ")
			}
			perNode(b, min(len(lhs.Values), len(rhs.Values)))
		})
	}
}
