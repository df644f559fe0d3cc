//go:build unix

package transcript

import (
	"errors"
	"syscall"
)

// Every open adds O_NONBLOCK, so that a FIFO planted at a transcript's name
// cannot block the open (a FIFO opened for reading or writing without a
// peer waits forever); what is not a regular file is then refused.
// Writers add O_NOFOLLOW: a symlink at the name is refused, never
// followed.
const (
	openNonBlock = syscall.O_NONBLOCK
	openNoFollow = syscall.O_NOFOLLOW
)

// isSymlinkRefusal reports whether err is an open refused by O_NOFOLLOW.
func isSymlinkRefusal(err error) bool { return errors.Is(err, syscall.ELOOP) }
