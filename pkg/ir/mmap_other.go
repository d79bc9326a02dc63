//go:build !linux

package ir

// mapFile maps files on Linux only; elsewhere LoadFile reads them.
func mapFile(string) ([]byte, func(), bool) { return nil, nil, false }
