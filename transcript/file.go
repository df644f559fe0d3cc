package transcript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is returned for a transcript name that is not a regular
// file (a FIFO, a device, a directory): reading or writing one could block
// forever, so it is refused without blocking.
var ErrNotRegular = errors.New("not a regular file")

// openRead opens a transcript for reading. A FIFO or device at path is
// refused with ErrNotRegular without blocking; symlinks are followed.
func openRead(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkRegular(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		what := "mode " + st.Mode().Type().String()
		switch {
		case st.Mode()&fs.ModeNamedPipe != 0:
			what = "a FIFO"
		case st.Mode()&fs.ModeDevice != 0:
			what = "a device"
		case st.Mode()&fs.ModeSocket != 0:
			what = "a socket"
		case st.IsDir():
			what = "a directory"
		}
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, what)}
	}
	return nil
}

// openForWriting opens (or creates, mode 0600) the transcript at path for
// reading and appending, refusing a symlink and anything but a regular
// file, and takes the writer's lock. created tells whether this call made
// the file.
func openForWriting(path string) (f *os.File, created bool, err error) {
	const flags = os.O_RDWR | os.O_APPEND | openNoFollow | openNonBlock
	f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, 0o600)
	created = err == nil
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(path, flags, 0)
	}
	if err != nil {
		if isSymlinkRefusal(err) {
			err = fmt.Errorf("%w: it is a symlink, which the recorder does not follow", err)
		}
		return nil, false, fmt.Errorf("open transcript %s: %w", path, err)
	}
	if err := checkRegular(f, path); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("open transcript: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, false, err
	}
	return f, created, nil
}

// saveTorn writes a torn tail beside the transcript, in <path>.torn, or
// <path>.torn.1, .torn.2 … when earlier recoveries left theirs: a tail
// saved once is never overwritten. The name is created exclusively, so a
// planted symlink is never followed.
func saveTorn(path string, torn []byte) (string, error) {
	for i := 0; i < 10000; i++ {
		name := path + ".torn"
		if i > 0 {
			name = fmt.Sprintf("%s.torn.%d", path, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(torn); err != nil {
			f.Close()
			os.Remove(name)
			return "", err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(name)
			return "", err
		}
		return name, f.Close()
	}
	return "", fmt.Errorf("%s.torn: 10000 torn tails already saved", path)
}
