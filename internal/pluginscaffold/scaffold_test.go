package pluginscaffold

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/golden"
)

// TestCreateGolden holds every kind's generated repository byte for byte:
// testdata/KIND.txtar lists its files in order, each after a "-- NAME --"
// line. The with-awf-module case adds the replace directive that
// --awf-module writes, with the checkout's path shown as AWF_CHECKOUT.
func TestCreateGolden(t *testing.T) {
	awf := t.TempDir()
	if err := os.MkdirAll(filepath.Join(awf, "pkg", "plugin", "sdk"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]Options{}
	for _, kind := range Kinds {
		cases[kind] = Options{Name: "awf-plugin-example-tool", Kind: kind}
	}
	cases["with-awf-module"] = Options{Name: "demo", Module: "example.com/demo", AWFModule: awf}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			o.Dir = filepath.Join(t.TempDir(), "out")
			res, err := Create(o)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			for _, f := range res.Files {
				data, err := os.ReadFile(filepath.Join(o.Dir, filepath.FromSlash(f)))
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString("-- " + f + " --\n")
				b.Write(data)
			}
			got := strings.ReplaceAll(b.String(), filepath.ToSlash(awf), "AWF_CHECKOUT")
			golden.Check(t, filepath.Join("testdata", name+".txtar"), []byte(got))
		})
	}
}

// TestCreateRejects holds the errors a user sees for a bad kind, a bad
// name and a directory that is in use.
func TestCreateRejects(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Name: "x", Kind: "teleport", Dir: filepath.Join(dir, "a")}, `kind "teleport" is not one of operation, step-type, validator, event`},
		{Options{Name: "Bad_Name", Dir: filepath.Join(dir, "b")}, `name "Bad_Name": the plugin's name must be`},
		{Options{Name: "x", AWFModule: dir}, "is not a checkout of " + SDKModule},
	} {
		if _, err := Create(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	used := filepath.Join(dir, "used")
	if _, err := Create(Options{Name: "x", Dir: used}); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(Options{Name: "x", Dir: used}); err == nil || !strings.Contains(err.Error(), "exists and is not empty") {
		t.Errorf("second create: %v", err)
	}
	if _, err := Create(Options{Name: "x", Dir: used, Force: true}); err != nil {
		t.Errorf("--force: %v", err)
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{"example": "Example", "example-tool": "ExampleTool", "a--b": "AB"} {
		if got := goName(in); got != want {
			t.Errorf("goName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTemplateDirsAreKinds holds templates/ to the kinds Create offers:
// a kind without its directory, or a directory no kind names, is a
// mistake the golden files would not show.
func TestTemplateDirsAreKinds(t *testing.T) {
	entries, err := templateFS.ReadDir("templates")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	want := append([]string{"common"}, Kinds...)
	slices.Sort(want)
	if !slices.Equal(dirs, want) {
		t.Errorf("templates/ holds %v, want %v", dirs, want)
	}
}
