//go:build !unix

package main

import "os"

// protocolOutput is stdout, where file descriptors cannot be moved.
func protocolOutput() (*os.File, error) { return os.Stdout, nil }
