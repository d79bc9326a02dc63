//go:build !linux

package ir

import "os"

// mapFile maps files on Linux only; elsewhere LoadFile reads them.
func mapFile(*os.File, int64) ([]byte, func(), bool) { return nil, nil, false }

func releaseMapped(region, b []byte) {}
