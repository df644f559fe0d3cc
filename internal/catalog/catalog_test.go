package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/workflow"
)

func wf(name string) string {
	return "name: " + name + "\nstates:\n  initial: a\n  a:\n    type: step\n    command: echo " + name + "\n    on_success: done\n  done:\n    type: terminal\n"
}

func caller(name, target string) string {
	return "name: " + name + "\nstates:\n  initial: a\n  a:\n    type: call_workflow\n    workflow: " + target + "\n    on_success: done\n  done:\n    type: terminal\n"
}

func writePack(t *testing.T, dir, name string, workflows map[string]string) {
	t.Helper()
	var list []string
	for w, body := range workflows {
		list = append(list, w)
		testfixtures.WriteFile(t, filepath.Join(dir, name, "workflows", w+".yaml"), body)
	}
	testfixtures.WriteFile(t, filepath.Join(dir, name, "manifest.yaml"), "name: "+name+"\nversion: 1.0.0\nawf_version: '>=0.5.0'\nworkflows: ["+strings.Join(list, ", ")+"]\n")
}

// fixture is a project, a home with AWF's global places, and an
// AWF_WORKFLOWS_PATH directory.
type fixture struct {
	root, proj, home, env string
	cat                   *Catalog
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{root: root, proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home"), env: filepath.Join(root, "envflows")}
	vars := map[string]string{"HOME": f.home, "AWF_WORKFLOWS_PATH": f.env}
	f.cat = &Catalog{ProjectDir: f.proj, Getenv: func(k string) string { return vars[k] }}
	testfixtures.WriteFile(t, filepath.Join(f.proj, ".reel", "workflows", "both.yaml"), wf("reel-both"))
	testfixtures.WriteFile(t, filepath.Join(f.proj, ".awf", "workflows", "both.yaml"), wf("awf-both"))
	testfixtures.WriteFile(t, filepath.Join(f.proj, ".awf", "workflows", "local.yaml"), wf("local"))
	testfixtures.WriteFile(t, filepath.Join(f.proj, ".awf", "workflows", "shadowed.yml"), wf("shadowed-local"))
	testfixtures.WriteFile(t, filepath.Join(f.proj, ".awf", "workflows", "sub", "nested.yaml"), wf("nested"))
	testfixtures.WriteFile(t, filepath.Join(f.env, "shadowed.yaml"), wf("shadowed-env"))
	testfixtures.WriteFile(t, filepath.Join(f.home, ".config", "awf", "workflows", "global.yaml"), wf("global"))
	testfixtures.WriteFile(t, filepath.Join(f.home, ".config", "awf", "workflows", "local.yaml"), wf("global-local"))
	locals := filepath.Join(f.proj, ".awf", "workflow-packs")
	globals := filepath.Join(f.home, ".local", "share", "awf", "workflow-packs")
	writePack(t, locals, "kit", map[string]string{"make": caller("make", "helper"), "helper": wf("kit-helper")})
	writePack(t, globals, "kit", map[string]string{"make": wf("global-kit-make")})
	writePack(t, globals, "tools", map[string]string{"lint": wf("lint"), "helper": wf("tools-helper")})
	testfixtures.WriteFile(t, filepath.Join(globals, "off", "manifest.yaml"), "name: off\nversion: 1.0.0\nawf_version: '>=0.5.0'\nworkflows: [w]\n")
	testfixtures.WriteFile(t, filepath.Join(globals, "off", "workflows", "w.yaml"), wf("off"))
	testfixtures.WriteFile(t, filepath.Join(globals, "off", "state.json"), `{"name":"off","enabled":false,"source_data":{"repository":"a/b","version":"1.0.0"}}`)
	testfixtures.WriteFile(t, filepath.Join(globals, "broken", "manifest.yaml"), "name: broken\n")
	return f
}

func TestDirs(t *testing.T) {
	f := newFixture(t)
	var got []string
	for _, d := range f.cat.Dirs() {
		got = append(got, d.Scope+":"+strings.TrimPrefix(d.Path, f.root))
	}
	want := "env:/envflows local:/proj/.reel/workflows local:/proj/.awf/workflows global:/home/.config/awf/workflows"
	if strings.Join(got, " ") != want {
		t.Errorf("Dirs:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if got := f.cat.PackDirs(); got[0] != filepath.Join(f.proj, ".awf", "workflow-packs") || !strings.Contains(strings.Join(got, " "), filepath.Join(f.home, ".local", "share", "awf", "workflow-packs")) {
		t.Errorf("PackDirs %v", got)
	}
}

func TestFind(t *testing.T) {
	f := newFixture(t)
	t.Chdir(f.proj)
	for ref, want := range map[string]struct{ file, scope, pack string }{
		"both":                      {".reel/workflows/both.yaml", ScopeLocal, ""},
		"local":                     {".awf/workflows/local.yaml", ScopeLocal, ""},
		"shadowed":                  {"/envflows/shadowed.yaml", ScopeEnv, ""},
		"global":                    {"/home/.config/awf/workflows/global.yaml", ScopeGlobal, ""},
		"kit/make":                  {".awf/workflow-packs/kit/workflows/make.yaml", ScopePack, "kit"},
		"tools/lint":                {"/home/.local/share/awf/workflow-packs/tools/workflows/lint.yaml", ScopePack, "tools"},
		"sub/nested":                {".awf/workflows/sub/nested.yaml", ScopeFile, ""},
		".awf/workflows/local.yaml": {".awf/workflows/local.yaml", ScopeLocal, ""},
		".awf/workflow-packs/kit/workflows/helper.yaml": {".awf/workflow-packs/kit/workflows/helper.yaml", ScopePack, "kit"},
	} {
		r, err := f.cat.Find(ref)
		if err != nil {
			t.Errorf("%s: %v", ref, err)
			continue
		}
		file := strings.TrimPrefix(strings.TrimPrefix(r.File, f.root), "/proj/")
		gotPack := ""
		if r.Pack != nil {
			gotPack = r.Pack.Name
		}
		if file != want.file || r.Scope != want.scope || gotPack != want.pack {
			t.Errorf("%s: %s %s %q, want %+v", ref, file, r.Scope, gotPack, want)
		}
	}
	for ref, want := range map[string]string{
		"nope":         `workflow not found: "nope" (looked in the working directory, ` + f.env,
		"kit/nope":     `workflow pack kit has no workflow "nope" (its manifest lists`,
		"nopack/x":     `(looked in the working directory, pack nopack, `,
		"tools/../kit": `workflow not found`,
		"off/w":        `workflow not found`,
	} {
		_, err := f.cat.Find(ref)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, workflow.ErrNotFound) {
			t.Errorf("%s: %v, want %q", ref, err, want)
		}
	}
}

func TestFindFromCallingWorkflow(t *testing.T) {
	f := newFixture(t)
	r, err := f.cat.Find("kit/make")
	if err != nil {
		t.Fatal(err)
	}
	from, err := f.cat.Load(r, workflow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if from.Pack == nil || from.Pack.Name != "kit" {
		t.Fatalf("pack %+v", from.Pack)
	}
	// a bare name inside a pack is the pack's own first
	if c, err := f.cat.FindFrom("helper", from); err != nil || !strings.HasSuffix(c.File, "kit/workflows/helper.yaml") || c.Pack.Name != "kit" {
		t.Errorf("own pack: %+v %v", c, err)
	}
	if c, err := f.cat.FindFrom("tools/helper", from); err != nil || c.Pack.Name != "tools" {
		t.Errorf("other pack: %+v %v", c, err)
	}
	if c, err := f.cat.FindFrom("global", from); err != nil || c.Scope != ScopeGlobal {
		t.Errorf("global from a pack: %+v %v", c, err)
	}
	// a project workflow calls a global one, and one beside it
	local := &workflow.Workflow{File: filepath.Join(f.proj, ".awf", "workflows", "local.yaml")}
	if c, err := f.cat.FindFrom("global", local); err != nil || c.Scope != ScopeGlobal {
		t.Errorf("global child: %+v %v", c, err)
	}
	testfixtures.WriteFile(t, filepath.Join(f.root, "elsewhere", "parent.yaml"), caller("parent", "sibling"))
	testfixtures.WriteFile(t, filepath.Join(f.root, "elsewhere", "sibling.yaml"), wf("sibling"))
	far := &workflow.Workflow{File: filepath.Join(f.root, "elsewhere", "parent.yaml")}
	if c, err := f.cat.FindFrom("sibling", far); err != nil || c.Scope != ScopeFile {
		t.Errorf("beside: %+v %v", c, err)
	}
	if c, err := f.cat.FindFrom("shadowed", far); err != nil || c.Scope != ScopeEnv {
		t.Errorf("env first: %+v %v", c, err)
	}
	// validation checks call targets as the run finds them
	testfixtures.WriteFile(t, filepath.Join(f.proj, ".awf", "workflows", "ghostly.yaml"), caller("ghostly", "ghost"))
	r, _ = f.cat.Find("ghostly")
	if _, err := f.cat.Load(r, workflow.Options{}); err == nil || !strings.Contains(err.Error(), `call_workflow: workflow not found: "ghost"`) {
		t.Errorf("ghost: %v", err)
	}
}

func TestList(t *testing.T) {
	f := newFixture(t)
	entries, probs, err := f.cat.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		s := e.Scope + ":" + e.Name
		if e.ShadowedBy != "" {
			s += "(shadowed)"
		}
		if e.Version != "" {
			s += "@" + e.Version
		}
		got = append(got, s)
	}
	want := "env:shadowed local:both local:both(shadowed) local:local local:shadowed(shadowed) global:global global:local(shadowed) " +
		"pack:kit/helper@1.0.0 pack:kit/make@1.0.0 pack:tools/helper@1.0.0 pack:tools/lint@1.0.0"
	if strings.Join(got, " ") != want {
		t.Errorf("List:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if len(probs) != 1 || !strings.Contains(probs[0].Dir, "broken") {
		t.Errorf("problems %v", probs)
	}
	// an unreadable workflows directory is an error
	os.RemoveAll(filepath.Join(f.proj, ".reel", "workflows"))
	testfixtures.WriteFile(t, filepath.Join(f.proj, ".reel", "workflows"), "not a directory")
	if _, _, err := f.cat.List(); err == nil {
		t.Error("a file for a workflows directory: no error")
	}
}

func TestPrompts(t *testing.T) {
	root := t.TempDir()
	vars := map[string]string{"HOME": filepath.Join(root, "home"), "AWF_PROMPTS_PATH": filepath.Join(root, "envp")}
	c := &Catalog{ProjectDir: filepath.Join(root, "proj"), Getenv: func(k string) string { return vars[k] }}
	testfixtures.WriteFile(t, filepath.Join(root, "envp", "a.md"), "env a")
	testfixtures.WriteFile(t, filepath.Join(root, "proj", ".awf", "prompts", "a.md"), "local a")
	testfixtures.WriteFile(t, filepath.Join(root, "proj", ".awf", "prompts", "team", "b.md"), "local b")
	testfixtures.WriteFile(t, filepath.Join(root, "home", ".config", "awf", "prompts", "team", "b.md"), "global b")
	testfixtures.WriteFile(t, filepath.Join(root, "home", ".config", "awf", "prompts", "c.md"), "global c")
	ps, probs := c.Prompts()
	var got []string
	for _, p := range ps {
		got = append(got, p.Name+"="+p.Scope)
	}
	if strings.Join(got, " ") != "a.md=env c.md=global team/b.md=local" || len(probs) != 0 {
		t.Errorf("prompts %v %v", got, probs)
	}
}
