package lint

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Frame is one frame of a node's stack trace, as FX records it in
// node.meta["stack_trace"] (torch/fx/proxy.py, TracerBase.create_node: the
// user frames of traceback.format_list):
//
//	File "/src/model.py", line 6, in combine_fn
//	  x.mul_(2)
type Frame struct {
	File   string
	Line   int
	Func   string
	Source string // the source line, trimmed; "" when the trace has none
}

var frameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*File "([^"]+)", line ([0-9]+)(?:, in (.*))?$`)
})

// Frames parses a stack trace into its frames, outermost first. Lines that
// are neither a frame header nor the source line after one are skipped.
func Frames(stackTrace string) []Frame {
	var out []Frame
	lines := strings.Split(stackTrace, "\n")
	for i := 0; i < len(lines); i++ {
		m := frameRE().FindStringSubmatch(strings.TrimRight(lines[i], "\r"))
		if m == nil {
			continue
		}
		line, err := strconv.Atoi(m[2])
		if err != nil || line <= 0 {
			continue
		}
		f := Frame{File: m[1], Line: line, Func: strings.TrimSpace(m[3])}
		if i+1 < len(lines) && frameRE().FindStringSubmatch(lines[i+1]) == nil {
			f.Source = strings.TrimSpace(lines[i+1])
			if f.Source != "" {
				i++
			}
		}
		out = append(out, f)
	}
	return out
}
