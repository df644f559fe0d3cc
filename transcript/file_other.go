//go:build !unix

package transcript

// Elsewhere than on Unix the open flags are not available: transcripts
// are opened plainly.
const (
	openNonBlock = 0
	openNoFollow = 0
)

func isSymlinkRefusal(error) bool { return false }
