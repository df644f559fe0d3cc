package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

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
	root, base, err := r.openRel("Glob", in.Path, true)
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
	root, base, err := r.openRel("Grep", in.Path, true)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	st, err := root.Stat(base)
	if err != nil {
		return nil, r.fsErr("Grep", in.Path, err)
	}
	g := &grepper{root: root, re: re, glob: in.Glob, single: !st.IsDir(), max: r.limit(defaultMaxOutput)}
	if st.IsDir() {
		err = r.walkFiles(ctx, root, base, g.file)
	} else {
		err = g.file(filepath.ToSlash(base))
	}
	if err != nil && !errors.Is(err, errEnough) {
		return nil, r.fsErr("Grep", in.Path, err)
	}
	return g.result(in.Pattern), nil
}

// grepper is one Grep: the files it searches and the matching lines it
// gathers, up to maxGrepMatches or the output limit.
type grepper struct {
	root   *os.Root
	re     *regexp.Regexp
	glob   string
	single bool // a file was named, not a directory
	max    int  // bytes of output

	out     strings.Builder
	matches int
	more    bool
	skipped int // files not searched: see ErrHardLinked and ErrNotRegular
}

// file searches the file at p (relative to the root), unless the glob
// leaves it out or it is no text.
func (g *grepper) file(p string) error {
	if g.glob != "" {
		name := p
		if !strings.Contains(g.glob, "/") {
			name = path.Base(p)
		}
		if !matchGlob(g.glob, name) {
			return nil
		}
	}
	f, fi, err := openChecked(g.root, p)
	if errors.Is(err, ErrHardLinked) || errors.Is(err, ErrNotRegular) {
		if g.single {
			return err
		}
		g.skipped++
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
		if !g.re.Match(text) {
			continue
		}
		if g.matches == maxGrepMatches || g.out.Len() > g.max {
			g.more = true
			return errEnough
		}
		g.matches++
		s := strings.ToValidUTF8(string(text), "\uFFFD")
		if len(s) > maxGrepLine {
			cut := maxGrepLine
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut] + "…"
		}
		fmt.Fprintf(&g.out, "%s:%d:%s\n", p, line, s)
	}
	return nil // a line over 1 MiB ends the scan of that file only
}

// result is what the model reads: the matches, or that there were none,
// and what was cut or skipped.
func (g *grepper) result(pattern string) string {
	note := ""
	if g.skipped > 0 {
		note = fmt.Sprintf("[%d file(s) not searched: not regular, or with more than one hard link]\n", g.skipped)
	}
	if g.matches == 0 {
		if note != "" {
			note = "\n" + note
		}
		return "no matches for " + pattern + note
	}
	if g.more {
		fmt.Fprintf(&g.out, "[stopped after %d matches; narrow the search]\n", g.matches)
	}
	return g.out.String() + note
}
