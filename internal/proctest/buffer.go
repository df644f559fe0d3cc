package proctest

import (
	"bytes"
	"sync"
)

// Buffer collects what a process (or the goroutines of the code under
// test) writes while the test reads it: a bytes.Buffer safe for a writer
// and a reader at once. Its zero value is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
