// Package build records what this binary is: its version, set at link time
//
//	go build -ldflags "-X github.com/hopctl/hopctl/internal/build.Version=1.2.3" ./cmd/hopctl
package build

// Version is hopctl's version string.
var Version = "0.1.0-dev"
