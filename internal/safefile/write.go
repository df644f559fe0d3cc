package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// WriteFile replaces path with data atomically: a reader sees the old file
// or the new one, never a part. The file is created 0600, its directory
// 0700 when missing. A symlink at path is replaced, not followed.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// File is a replacement for a file being written: Commit puts it in place,
// Close without Commit throws it away.
type File struct {
	f    *os.File
	path string
	done bool
}

// Create starts the atomic replacement of path: writes go to a new file
// beside it, created with O_EXCL (mode 0600), so nothing planted at any
// name is ever opened.
func Create(path string) (*File, error) {
	dir := filepath.Dir(path)
	if err := MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	// CreateTemp opens O_CREATE|O_EXCL with a random name and mode 0600.
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{f: f, path: path}, nil
}

// Write writes to the replacement.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.f.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", f.path, err)
	}
	return n, err
}

// Commit flushes the replacement to stable storage and renames it over the
// target, then flushes the directory so the rename survives a crash.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: already committed or closed", f.path)
	}
	f.done = true
	tmp := f.f.Name()
	fail := func(err error) error {
		f.f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := f.f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		// Not every file system can sync a directory; the data is
		// already durable, so a failure here is not the write's.
		d.Sync()
		d.Close()
	}
	return nil
}

// Close discards the replacement unless it was committed. It is
// idempotent.
func (f *File) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	f.f.Close()
	return os.Remove(f.f.Name())
}

// Appender appends whole lines to a file shared by several writers (and
// processes), such as the audit trail. Each line goes out in one write(2)
// on an O_APPEND file, so lines of concurrent writers never mix. When a
// write fails part way (a full disk), or the file already ends in a torn
// line, the next line starts with a newline, so the fragment stays a line
// of its own and everything after it reads.
type Appender struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	fresh  bool // the file ends with a newline (or is empty)
	buf    []byte
	writes func([]byte) (int, error) // f.Write; tests inject failures
}

// OpenAppender opens path for appending lines, creating it 0600 (and its
// directory 0700). A symlink at path and anything but a regular file are
// refused, without blocking.
func OpenAppender(path string) (*Appender, error) {
	if err := MkdirAll(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = fmt.Errorf("%w: is a symlink, which reel does not follow for a file it writes", err)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := checkRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	a := &Appender{f: f, path: path}
	a.writes = f.Write
	a.fresh = a.endsWithNewline()
	return a, nil
}

// AppendLine appends line (without its newline, which AppendLine adds) in
// a single write. A line holding a newline is refused: it would not be one
// line.
func (a *Appender) AppendLine(line []byte) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("append to %s: line holds a newline", a.path)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf = a.buf[:0]
	if !a.fresh && !a.endsWithNewline() {
		a.buf = append(a.buf, '\n')
	}
	a.buf = append(a.buf, line...)
	a.buf = append(a.buf, '\n')
	n, err := a.writes(a.buf)
	if err != nil || n != len(a.buf) {
		// Whatever reached the file is a torn line now (or nothing); the
		// next line must not continue it.
		a.fresh = false
		if err == nil {
			err = io.ErrShortWrite
		}
		return fmt.Errorf("append to %s: %w", a.path, err)
	}
	a.fresh = true
	return nil
}

// endsWithNewline looks at the file's last byte: after a torn write,
// another process may have ended the line since.
func (a *Appender) endsWithNewline() bool {
	st, err := a.f.Stat()
	if err != nil || st.Size() == 0 {
		return err == nil
	}
	var last [1]byte
	_, err = a.f.ReadAt(last[:], st.Size()-1)
	return err == nil && last[0] == '\n'
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }
