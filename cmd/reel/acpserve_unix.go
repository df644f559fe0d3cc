//go:build unix

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// protocolOutput takes stdout for the protocol: the returned file is a
// copy of it, and file descriptor 1 becomes stderr, so that nothing else
// (a stray print, a process that inherits it) can put a byte between two
// frames.
func protocolOutput() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("take stdout: %w", err)
	}
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("point stdout at stderr: %w", err)
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "protocol"), nil
}
