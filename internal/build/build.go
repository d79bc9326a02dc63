// Package build records what this binary is: its version, set at link time
//
//	go build -ldflags "-X github.com/hopctl/hopctl/internal/build.Version=1.2.3" ./cmd/hopctl
//
// or, for `go install github.com/hopctl/hopctl/cmd/hopctl@v1.2.3`, read from
// the module version the go command records in the binary ("1.2.3", the
// number python/hopctl_torch/VERSION holds).
package build

import (
	"runtime/debug"
	"strings"
)

// Version is hopctl's version string.
var Version = "0.1.0-dev"

func init() {
	if Version != "0.1.0-dev" {
		return
	}
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") {
		Version = strings.TrimPrefix(bi.Main.Version, "v")
	}
}
