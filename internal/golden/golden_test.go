package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	cases := []struct {
		want, got, diff string
	}{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2, column 1:\nwant: b\n got: c"},
		{"a\nbxy\n", "a\nbxz\n", "line 2, column 3:\nwant: bxy\n got: bxz"},
		{"a\n", "a\nb\n", "line 2, column 1:\nwant: (end of text)\n got: b"},
		{"a\nb\n", "a\nb", "line 2, column 2:\nwant: b\n got: b (no newline at end)"},
		{"", "x", "line 1, column 1:\nwant: (end of text)\n got: x (no newline at end)"},
	}
	for _, c := range cases {
		if d := Diff([]byte(c.want), []byte(c.got)); d != c.diff {
			t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", c.want, c.got, d, c.diff)
		}
	}
}

// recorder is a testing.TB that keeps what Check reports instead of failing
// the test running it.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// check runs Check with a recorder in its own goroutine, since a fatal
// report ends the goroutine that makes it.
func check(path string, got []byte) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, path, got)
	}()
	<-done
	return r
}

// setUpdate sets -update for one test, so that these tests mean the same
// whether or not the run itself was started with -update.
func setUpdate(t *testing.T, v bool) {
	old := *update
	*update = v
	t.Cleanup(func() { *update = old })
}

func TestCheck(t *testing.T) {
	setUpdate(t, false)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := check(path, []byte("one\ntwo\n")); len(r.errors)+len(r.fatals) != 0 {
		t.Errorf("equal output reported %v %v", r.errors, r.fatals)
	}
	r := check(path, []byte("one\nthree\n"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], path) || !strings.Contains(r.errors[0], "want: two\n got: three") {
		t.Errorf("different output reported %q", r.errors)
	}
	r = check(filepath.Join(dir, "missing.txt"), []byte("x"))
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "-update") {
		t.Errorf("missing golden file reported %q", r.fatals)
	}
}

func TestCheckUpdate(t *testing.T) {
	setUpdate(t, true)
	path := filepath.Join(t.TempDir(), "new", "dir", "out.txt")
	if r := check(path, []byte("fresh\n")); len(r.errors)+len(r.fatals) != 0 {
		t.Fatalf("update reported %v %v", r.errors, r.fatals)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "fresh\n" {
		t.Fatalf("update wrote %q, %v", data, err)
	}
}
