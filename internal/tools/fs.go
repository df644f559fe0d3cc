package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
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
	rel, err := r.rel(in.FilePath)
	if err != nil {
		return nil, fmt.Errorf("Read: %w", err)
	}
	root, err := r.open()
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
	rel, err := r.rel(in.FilePath)
	if err != nil {
		return nil, fmt.Errorf("Edit: %w", err)
	}
	root, err := r.open()
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

// matchGlob reports whether the slash-separated name matches pattern, where
// a "**" segment matches any number of segments (also none).
func matchGlob(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// matchSegs matches by dynamic programming: a model-supplied pattern with
// many "**" segments must not make the match exponential.
func matchSegs(pat, name []string) bool {
	// next[j] reports whether pat[i+1:] matches name[j:]; cur is row i.
	next := make([]bool, len(name)+1)
	next[len(name)] = true // the empty pattern matches only the empty name
	cur := make([]bool, len(name)+1)
	for i := len(pat) - 1; i >= 0; i-- {
		if pat[i] == "**" {
			// "**" matches name[j:k] for any k >= j.
			cur[len(name)] = next[len(name)]
			for j := len(name) - 1; j >= 0; j-- {
				cur[j] = next[j] || cur[j+1]
			}
		} else {
			cur[len(name)] = false
			for j := len(name) - 1; j >= 0; j-- {
				ok, err := path.Match(pat[i], name[j])
				cur[j] = err == nil && ok && next[j+1]
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

func validGlob(pattern string) error {
	if pattern == "" {
		return errors.New("empty pattern")
	}
	for seg := range strings.SplitSeq(pattern, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	return nil
}

// walkFiles visits the regular files under base (a path relative to the
// working directory) without following symlinks, skipping .git.
func (r *Router) walkFiles(ctx context.Context, root *os.Root, base string, fn func(rel string) error) error {
	fsys := root.FS()
	base = filepath.ToSlash(base)
	n := 0
	return fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base {
				return err
			}
			return nil // unreadable entry: skip it, keep searching
		}
		if n++; n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != base {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return fn(p)
	})
}

var errEnough = errors.New("enough results")

func (r *Router) glob(ctx context.Context, input json.RawMessage) (any, error) {
	var in struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := decode("Glob", input, &in); err != nil {
		return nil, err
	}
	if err := validGlob(in.Pattern); err != nil {
		return nil, fmt.Errorf("Glob: %w", err)
	}
	base := "."
	if in.Path != "" {
		var err error
		if base, err = r.rel(in.Path); err != nil {
			return nil, fmt.Errorf("Glob: %w", err)
		}
	}
	root, err := r.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var found []string
	more := false
	err = r.walkFiles(ctx, root, base, func(p string) error {
		sub := p
		if base != "." {
			sub = strings.TrimPrefix(p, filepath.ToSlash(base)+"/")
		}
		if matchGlob(in.Pattern, sub) {
			if len(found) == maxGlobResults {
				more = true
				return errEnough
			}
			found = append(found, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, r.fsErr("Glob", in.Path, err)
	}
	if len(found) == 0 {
		return "no files match " + in.Pattern, nil
	}
	sort.Strings(found)
	out := strings.Join(found, "\n")
	if more {
		out += fmt.Sprintf("\n[more than %d files match; narrow the pattern]", maxGlobResults)
	}
	return out, nil
}

func (r *Router) grep(ctx context.Context, input json.RawMessage) (any, error) {
	var in struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path"`
		Glob       string `json:"glob"`
		IgnoreCase bool   `json:"ignore_case"`
	}
	if err := decode("Grep", input, &in); err != nil {
		return nil, err
	}
	if in.Pattern == "" {
		return nil, errors.New("Grep: empty pattern")
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("Grep: %w", err)
	}
	if in.Glob != "" {
		if err := validGlob(in.Glob); err != nil {
			return nil, fmt.Errorf("Grep: glob: %w", err)
		}
	}
	base := "."
	if in.Path != "" {
		if base, err = r.rel(in.Path); err != nil {
			return nil, fmt.Errorf("Grep: %w", err)
		}
	}
	root, err := r.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	st, err := root.Stat(base)
	if err != nil {
		return nil, r.fsErr("Grep", in.Path, err)
	}
	var out strings.Builder
	matches, max := 0, r.limit(defaultMaxOutput)
	more := false
	single := !st.IsDir()
	skipped := 0 // files not searched: see ErrHardLinked and ErrNotRegular
	search := func(p string) error {
		if in.Glob != "" {
			name := p
			if !strings.Contains(in.Glob, "/") {
				name = path.Base(p)
			}
			if !matchGlob(in.Glob, name) {
				return nil
			}
		}
		f, fi, err := openChecked(root, p)
		if errors.Is(err, ErrHardLinked) || errors.Is(err, ErrNotRegular) {
			if single {
				return err
			}
			skipped++
			return nil
		}
		if err != nil {
			return nil
		}
		defer f.Close()
		if fi.IsDir() || fi.Size() > maxGrepFileSize {
			return nil
		}
		br := bufio.NewReaderSize(f, 64<<10)
		head, _ := br.Peek(binarySniffBytes)
		if isBinary(head) {
			return nil
		}
		sc := bufio.NewScanner(br)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for line := 1; sc.Scan(); line++ {
			text := sc.Bytes()
			if !re.Match(text) {
				continue
			}
			if matches == maxGrepMatches || out.Len() > max {
				more = true
				return errEnough
			}
			matches++
			s := strings.ToValidUTF8(string(text), "\uFFFD")
			if len(s) > maxGrepLine {
				cut := maxGrepLine
				for cut > 0 && !utf8.RuneStart(s[cut]) {
					cut--
				}
				s = s[:cut] + "…"
			}
			fmt.Fprintf(&out, "%s:%d:%s\n", p, line, s)
		}
		return nil // a line over 1 MiB ends the scan of that file only
	}
	if st.IsDir() {
		err = r.walkFiles(ctx, root, base, search)
	} else {
		err = search(filepath.ToSlash(base))
	}
	if err != nil && !errors.Is(err, errEnough) {
		return nil, r.fsErr("Grep", in.Path, err)
	}
	note := ""
	if skipped > 0 {
		note = fmt.Sprintf("[%d file(s) not searched: not regular, or with more than one hard link]\n", skipped)
	}
	if matches == 0 {
		if note != "" {
			note = "\n" + note
		}
		return "no matches for " + in.Pattern + note, nil
	}
	if more {
		fmt.Fprintf(&out, "[stopped after %d matches; narrow the search]\n", matches)
	}
	return out.String() + note, nil
}
