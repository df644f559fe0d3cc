package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const (
	defaultReadLimit = 256 << 10
	defaultMaxOutput = 64 << 10
	maxGlobResults   = 1000
	maxGrepMatches   = 500
	maxGrepLine      = 500
	maxGrepFileSize  = 10 << 20
	binarySniffBytes = 8000
)

// ErrOutside is returned for a path that leaves the working directory,
// lexically or through a symlink.
var ErrOutside = errors.New("outside the working directory")

// ErrNotRegular is returned for a path that is not a regular file (a FIFO,
// a device, a socket): reading or writing one could block forever.
var ErrNotRegular = errors.New("not a regular file")

// ErrHardLinked is returned for a file with more than one hard link. Its
// other names may be outside the working directory, where a link made
// there would lead (os.Root stops symlinks, not hard links), so the file
// tools neither read nor write it.
var ErrHardLinked = errors.New("has more than one hard link")

// openChecked opens rel for reading without blocking, and refuses anything
// but a regular file with a single link.
func openChecked(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := checkFile(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// checkFile refuses what the file tools do not touch: see ErrNotRegular
// and ErrHardLinked. A directory passes, for the callers to handle.
func checkFile(f *os.File) (fs.FileInfo, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return st, checkInfo(st)
}

func checkInfo(st fs.FileInfo) error {
	if st.IsDir() {
		return nil
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return fmt.Errorf("%w (%d): its other names may be outside the working directory", ErrHardLinked, sys.Nlink)
	}
	return nil
}

// rel turns a path given by a model into a path relative to the working
// directory, refusing anything that leaves it lexically. Symlink escapes are
// refused later by os.Root, which every file access goes through.
func (r *Router) rel(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	c := filepath.Clean(p)
	if filepath.IsAbs(c) {
		for _, base := range []string{r.dir, r.realDir} {
			if rel, err := filepath.Rel(base, c); err == nil && !escapes(rel) {
				return rel, nil
			}
		}
		return "", fmt.Errorf("path %s: %w %s", p, ErrOutside, r.dir)
	}
	if escapes(c) {
		return "", fmt.Errorf("path %s: %w %s", p, ErrOutside, r.dir)
	}
	return c, nil
}

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// open gives the root every file access goes through. os.Root refuses
// symlinks (and ..) that lead out of the directory, also in races.
func (r *Router) open() (*os.Root, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, fmt.Errorf("open working directory: %w", err)
	}
	return root, nil
}

// openRel resolves the path a tool was given, relative to the working
// directory, and opens the root every access goes through; an empty path,
// where allowEmpty, is the directory itself. The caller closes the root.
func (r *Router) openRel(op, p string, allowEmpty bool) (*os.Root, string, error) {
	rel := "."
	if p != "" || !allowEmpty {
		var err error
		if rel, err = r.rel(p); err != nil {
			return nil, "", fmt.Errorf("%s: %w", op, err)
		}
	}
	root, err := r.open()
	if err != nil {
		return nil, "", err
	}
	return root, rel, nil
}

// fsErr rewrites os.Root's escape error into one a model understands.
func (r *Router) fsErr(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("%s %s: %w %s (symlink)", op, p, ErrOutside, r.dir)
	}
	return fmt.Errorf("%s %s: %w", op, p, err)
}

func (r *Router) limit(def int) int {
	if r.opts.MaxOutput > 0 {
		return r.opts.MaxOutput
	}
	return def
}

func isBinary(b []byte) bool {
	if len(b) > binarySniffBytes {
		b = b[:binarySniffBytes]
	}
	return bytes.IndexByte(b, 0) >= 0
}

func (r *Router) read(input json.RawMessage) (any, error) {
	var in struct {
		FilePath string `json:"file_path"`
		Offset   int    `json:"offset"`
		Limit    int    `json:"limit"`
	}
	if err := decode("Read", input, &in); err != nil {
		return nil, err
	}
	root, rel, err := r.openRel("Read", in.FilePath, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, st, err := openChecked(root, rel)
	if err != nil {
		return nil, r.fsErr("Read", in.FilePath, err)
	}
	defer f.Close()
	if st.IsDir() {
		return nil, fmt.Errorf("Read %s: is a directory (use Glob to list it)", in.FilePath)
	}
	max := r.limit(defaultReadLimit)
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, r.fsErr("Read", in.FilePath, err)
	}
	// Every byte read is checked, not only the first few thousand: a
	// file whose NUL bytes start later (a sparse file, a database) is no
	// text to show a model either.
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, fmt.Errorf("Read %s: binary file (%d bytes), not shown", in.FilePath, st.Size())
	}
	truncated := len(data) > max
	if truncated {
		data = data[:max]
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	if in.Offset > 1 || in.Limit > 0 {
		lines := strings.SplitAfter(text, "\n")
		start := max0(in.Offset - 1)
		if start > len(lines) {
			start = len(lines)
		}
		end := len(lines)
		if in.Limit > 0 && start+in.Limit < end {
			end = start + in.Limit
		}
		text = strings.Join(lines[start:end], "")
	}
	if truncated {
		text += fmt.Sprintf("\n[truncated: file is %d bytes, only the first %d were read]", st.Size(), max)
	}
	return text, nil
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// writeFile replaces rel with data: written to a new file beside it,
// then renamed over it, so a crash leaves the old content or the new, and
// nothing is ever written through the name (a FIFO, a device, a link).
// An existing file keeps its mode.
func (r *Router) writeFile(root *os.Root, rel string, data []byte) error {
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := fs.FileMode(0o644)
	if st, err := root.Lstat(rel); err == nil {
		if st.Mode()&fs.ModeSymlink != 0 {
			// Replacing the name would turn the link into a file; the
			// model can write the target instead, if it is inside.
			if _, err := root.Stat(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			target, _ := root.Readlink(rel)
			return fmt.Errorf("is a symlink to %s; write to that file instead", target)
		}
		if st.IsDir() {
			return errors.New("is a directory")
		}
		if err := checkInfo(st); err != nil {
			return err
		}
		mode = st.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var tmp string
	var f *os.File
	for i := 0; ; i++ {
		tmp = filepath.Join(filepath.Dir(rel), fmt.Sprintf(".%s.reel-%d-%d.tmp", filepath.Base(rel), os.Getpid(), i))
		var err error
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return err
		}
	}
	fail := func(err error) error {
		f.Close()
		root.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil { // the umask may have cut it
		return fail(err)
	}
	if err := f.Close(); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

func (r *Router) write(input json.RawMessage) (any, error) {
	var in struct {
		FilePath string  `json:"file_path"`
		Content  *string `json:"content"`
	}
	if err := decode("Write", input, &in); err != nil {
		return nil, err
	}
	if in.Content == nil {
		return nil, errors.New("Write: missing content")
	}
	rel, err := r.rel(in.FilePath)
	if err != nil {
		return nil, fmt.Errorf("Write: %w", err)
	}
	if rel == "." {
		return nil, fmt.Errorf("Write %s: is the working directory", in.FilePath)
	}
	root, err := r.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := r.writeFile(root, rel, []byte(*in.Content)); err != nil {
		return nil, r.fsErr("Write", in.FilePath, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(*in.Content), filepath.ToSlash(rel)), nil
}

func (r *Router) edit(input json.RawMessage) (any, error) {
	var in struct {
		FilePath   string `json:"file_path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if err := decode("Edit", input, &in); err != nil {
		return nil, err
	}
	if in.OldString == "" {
		return nil, errors.New("Edit: old_string is empty (use Write to create a file)")
	}
	if in.OldString == in.NewString {
		return nil, errors.New("Edit: old_string and new_string are the same")
	}
	root, rel, err := r.openRel("Edit", in.FilePath, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, st, err := openChecked(root, rel)
	if err != nil {
		return nil, r.fsErr("Edit", in.FilePath, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("Edit %s: is a directory", in.FilePath)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, r.fsErr("Edit", in.FilePath, err)
	}
	text := string(data)
	n := strings.Count(text, in.OldString)
	switch {
	case n == 0:
		return nil, fmt.Errorf("Edit %s: old_string not found", in.FilePath)
	case n > 1 && !in.ReplaceAll:
		return nil, fmt.Errorf("Edit %s: old_string occurs %d times; add context to make it unique or set replace_all", in.FilePath, n)
	}
	if in.ReplaceAll {
		text = strings.ReplaceAll(text, in.OldString, in.NewString)
	} else {
		text = strings.Replace(text, in.OldString, in.NewString, 1)
	}
	if err := r.writeFile(root, rel, []byte(text)); err != nil {
		return nil, r.fsErr("Edit", in.FilePath, err)
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", n, filepath.ToSlash(rel)), nil
}
