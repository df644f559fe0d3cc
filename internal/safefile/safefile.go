// Package safefile decides how reel touches files it does not fully
// control: the storage (transcripts, audit trail, index), export targets,
// and whatever a user or a model names as input.
//
// Every write reel makes goes through it and is
//
//   - private: directories are created 0700 and files 0600;
//   - never through a planted link: a file is opened with O_NOFOLLOW, so a
//     symlink at its name is refused, and a replacement is written to a new
//     file created with O_EXCL beside it (which never follows anything) and
//     renamed over the name (which replaces a symlink instead of following
//     it);
//   - whole: a file is replaced atomically (write beside, fsync, rename,
//     fsync the directory) or appended to in whole lines only, and an
//     append after a torn line (a full disk cut the last write short)
//     starts on a fresh line;
//   - never blocking: every open is non-blocking and anything but a regular
//     file (a FIFO, a device, a socket) is refused with ErrNotRegular
//     before a byte is read or written.
//
// The directories leading to a file are the user's to choose (a storage
// directory may well be a symlink to another disk) and are followed.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is returned for a name that is not a regular file: a FIFO,
// a device, a socket or a directory. Opening such a file for reading or
// writing could block forever (a FIFO without a writer) or never end (a
// device), so it is refused.
var ErrNotRegular = errors.New("not a regular file")

// ErrNotEmpty is returned by CheckTarget for a target directory that
// already holds files.
var ErrNotEmpty = errors.New("not empty")

// Open opens a regular file for reading. A FIFO, device or socket is
// refused without blocking. Symlinks are followed: reading through one
// changes nothing.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a whole regular file, as os.ReadFile does, refusing what
// Open refuses.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// checkRegular refuses f unless it is a regular file. O_NONBLOCK stays set:
// it changes nothing for a regular file.
func checkRegular(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
	}
	return nil
}

// kind names a file mode for an error message.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "mode " + m.String()
}

// FS is os.DirFS(dir) whose Open refuses, without blocking, anything but
// regular files and directories.
func FS(dir string) fs.FS { return dirFS(dir) }

type dirFS string

func (d dirFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	path := filepath.Join(string(d), filepath.FromSlash(name))
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
	}
	return f, nil
}

// MkdirAll creates dir and its missing parents with mode 0700.
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}

// CheckTarget checks that dir can receive an export: it does not exist or
// is an empty directory. With force, an existing directory is accepted
// whatever it holds (the files written replace those of the same names).
func CheckTarget(dir string, force bool) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		// The user may name a symlink to a directory; what matters is
		// where it leads.
		if st, err = os.Stat(dir); err != nil {
			return err
		}
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	if force {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && err != io.EOF {
		return err
	}
	if len(names) > 0 {
		return fmt.Errorf("%s: %w (it holds %s; name an empty or new directory, or use --force to replace files in it)", dir, ErrNotEmpty, names[0])
	}
	return nil
}

// CheckPlain checks that each path is absent or a regular file, without
// following a symlink. It is for files another library opens by name to
// write (SQLite opens its database, and creates its -wal and -shm files,
// with a plain open that follows links and may block on a FIFO): reel
// cannot open them itself with O_NOFOLLOW, so it looks first.
func CheckPlain(paths ...string) error {
	for _, p := range paths {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
		}
	}
	return nil
}

// Touch makes path an existing private regular file: it creates it 0600
// when missing, and takes group and other permissions from one that has
// them, through the descriptor it opened. A symlink at path and anything
// but a regular file are refused, without blocking. It is for a file
// another library then opens by name (SQLite's database), so that the
// library never creates it, and reel's own open of it follows nothing.
func Touch(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = fmt.Errorf("%w: is a symlink, which reel does not follow for a file it writes", err)
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if err := checkRegular(f, path); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(st.Mode().Perm() &^ 0o077); err != nil {
			return fmt.Errorf("make %s private: %w", path, err)
		}
	}
	return nil
}
