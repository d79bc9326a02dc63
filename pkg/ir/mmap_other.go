//go:build !linux

package ir

import (
	"os"
	"syscall"
)

// mapFile maps files on Linux only; elsewhere LoadFile reads them.
func mapFile(*os.File, int64) ([]byte, func(), bool) { return nil, nil, false }

func releaseMapped(region, b []byte) {}

// writesInPlace: elsewhere the binary encoder writes files in order.
func writesInPlace(syscall.Conn) bool { return false }
