package ir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMistakeOfGraphFiles: no graph file of the repository, good or
// corrupt, is taken for a file of another kind, so a graph file's own
// decoding error is never replaced by "a Python source file".
func TestMistakeOfGraphFiles(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join("..", "..", "testdata"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "mistaken" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".pb", ".pbtxt", ".json", ".pt2":
		default:
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if m := mistakeOf(p, data); m != nil {
			t.Errorf("%s: taken for %v", p, m)
		}
		return nil
	})
	if err != nil || n < 100 {
		t.Fatalf("walked %d graph files: %v", n, err)
	}
}

// TestMistakeOfContent: the kinds recognised by content alone, as the
// bytes each starts with.
func TestMistakeOfContent(t *testing.T) {
	for _, tc := range []struct {
		data, want string // want "" for no mistake
	}{
		{"#!/usr/bin/env python3\nprint(1)\n", "a Python source file"},
		{"# model\n\nfrom torch import nn\n", "a Python source file"},
		{"@torch.compile\ndef f(x): return x\n", "a Python source file"},
		{"# a comment\nformat_version: { major: 1 }\n", ""},
		{"\x80\x04\x95\x10\x00", "a Python pickle"},
		{"\x08\x07\x12\x07pytorch", "an ONNX model"},
		{"\x0a\x04\x08\x01\x10\x01", ""}, // hopctl's binary: format_version first
		{"\x08\x07", ""},                 // a varint alone is no ModelProto
	} {
		got := mistakeOf("file", []byte(tc.data))
		if tc.want == "" && got != nil || tc.want != "" && (got == nil || !strings.HasPrefix(got.Error(), tc.want)) {
			t.Errorf("%q: got %v, want %q", tc.data, got, tc.want)
		}
	}
}
