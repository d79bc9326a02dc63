package cli_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cli"
)

// TestMistakenInputs passes every command that reads a graph file the
// files a torch user is likely to pass by mistake, as real torch writes
// them (testdata/mistaken, python/tools/make_mistaken.py): each is invalid
// input (exit 3) and the message says what the file is and the export to
// run instead, not the decoder's complaint about it.
func TestMistakenInputs(t *testing.T) {
	sandbox(t)
	want := map[string][]string{
		"model.py":      {"a Python source file, not a graph file", "unknown field"},
		"model.onnx":    {"an ONNX model (torch.onnx.export)", "invalid UTF-8"},
		"legacy.pt":     {"a torch.save file in the legacy pickle format", "end group"},
		"state_dict.pt": {"a torch.save checkpoint (a zip with data.pkl", "neither archive_format"},
		"module.pt":     {"a torch.save checkpoint (a zip with data.pkl", "neither archive_format"},
		"scripted.pt":   {"a TorchScript archive (torch.jit.save", "neither archive_format"},
	}
	// testdata/mistaken is torch 1.13's; torch2.14 has the same files but
	// model.onnx, which torch 2.14 exports only through onnxscript.
	var files []string
	for _, sub := range []string{"", "torch2.14"} {
		entries, err := os.ReadDir(testdata(t, "mistaken", sub))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() && e.Name() != "README.md" {
				names = append(names, e.Name())
				files = append(files, filepath.Join(sub, e.Name()))
			}
		}
		keys := slices.Sorted(maps.Keys(want))
		if sub != "" {
			keys = slices.DeleteFunc(keys, func(k string) bool { return k == "model.onnx" })
		}
		if !slices.Equal(names, keys) {
			t.Fatalf("testdata/mistaken/%s holds %v, the test expects %v: regenerate with python/tools/make_mistaken.py or update the test", sub, names, keys)
		}
	}
	for _, rel := range files {
		name := filepath.Base(rel)
		what, decoderSays := want[name][0], want[name][1]
		file := testdata(t, "mistaken", rel)
		for _, args := range [][]string{
			{"analyze", file},
			{"print", file},
			{"joint", file, "-o", "j.pb"},
			{"report", file, "-o", "r.html"},
			{"convert", file, "out.pb"},
			{"lint", file},
		} {
			code, _, stderr := run(t, args...)
			if code != cli.ExitInput {
				t.Errorf("%s: exit %d, want %d: %s", strings.Join(args, " "), code, cli.ExitInput, stderr)
			}
			for _, w := range []string{name + ": " + what, `torch.export.save(torch.export.export(model, args), "model.pt2")`, "hopctl_torch.export("} {
				if !strings.Contains(stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", strings.Join(args, " "), w, stderr)
				}
			}
			if strings.Contains(stderr, decoderSays) {
				t.Errorf("%s: stderr has the decoder's error %q, which says nothing to act on:\n%s", strings.Join(args, " "), decoderSays, stderr)
			}
		}
	}
}

// TestMistakenByContent: the Python and ONNX files are recognised by their
// content too, under a name that does not say what they are (an ONNX
// model saved as .pb, a script without .py).
func TestMistakenByContent(t *testing.T) {
	sandbox(t)
	for _, tc := range []struct{ src, name, what string }{
		{"model.onnx", "exported.pb", "an ONNX model (torch.onnx.export)"},
		{"model.py", "train", "a Python source file"},
		{"model.py", "graph.pbtxt", "a Python source file"},
		{"legacy.pt", "weights.bin", "a torch.save file in the legacy pickle format"},
		{"scripted.pt", "model.pt2", "a TorchScript archive"},
	} {
		copyFile(t, testdata(t, "mistaken", tc.src), tc.name)
		code, _, stderr := run(t, "analyze", tc.name)
		if code != cli.ExitInput || !strings.Contains(stderr, tc.name+": "+tc.what) {
			t.Errorf("%s as %s: exit %d: %s", tc.src, tc.name, code, stderr)
		}
	}
	// A text graph file that does not parse is not taken for Python.
	if err := os.WriteFile("broken.pbtxt", []byte("# a comment\nformat_version: {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "analyze", "broken.pbtxt"); code != cli.ExitInput || !strings.Contains(stderr, "cannot decode as text hopctl graph") {
		t.Errorf("broken.pbtxt: exit %d: %s", code, stderr)
	}
}

// TestLintDirOfModels: lint on a directory holding a project's models but
// no graph file says what they are and the export to run, not only that
// it found nothing; a walk counts what Expand walks (not the files in a
// skipped .git, nor below DIR without /...).
func TestLintDirOfModels(t *testing.T) {
	sandbox(t)
	for _, f := range []string{"ckpt/a.pt", "ckpt/b.pt", "ckpt/model.py", "ckpt/sub/c.onnx", "ckpt/.git/d.pt", "empty/x.txt"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ arg, want string }{
		{"ckpt", "lint: no graph files in ckpt: the 2 .pt and 1 .py files there are not graph files; export the model: torch.export.save("},
		{"ckpt/...", "lint: no graph files in ckpt/...: the 2 .pt, 1 .onnx and 1 .py files there are not graph files;"},
		{"empty", "lint: no graph files in empty\n"},
	} {
		if code, _, stderr := run(t, "lint", tc.arg); code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("lint %s: exit %d, want 2 and %q: %s", tc.arg, code, tc.want, stderr)
		}
	}
}

// TestDirectoryToSingleFileCommand: a directory given where one graph file
// is read names the command that reads directories.
func TestDirectoryToSingleFileCommand(t *testing.T) {
	dir := sandbox(t)
	models := filepath.Join(dir, "models")
	if err := os.Mkdir(models, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"analyze", "models"}, {"print", "models/"}, {"joint", "models", "-o", "j.pb"}, {"report", "models", "-o", "r.html"}} {
		code, _, stderr := run(t, args...)
		if code != cli.ExitInput || !strings.Contains(stderr, "is a directory, not a graph file; 'hopctl lint "+args[1]+"' checks every graph file in it ('models/...' recursively)") {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
}
