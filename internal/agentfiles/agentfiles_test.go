package agentfiles

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/testfixtures"
)

// finder returns a Finder over a fresh project and home directory.
func finder(t *testing.T, extra ...string) (*Finder, string, string) {
	t.Helper()
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &Finder{ProjectDir: proj, Env: append([]string{"HOME=" + home}, extra...)}, proj, home
}

func TestSearchOrder(t *testing.T) {
	f, proj, home := finder(t)
	want := []string{
		filepath.Join(proj, ".awf", "skills"), filepath.Join(proj, ".agents", "skills"), filepath.Join(proj, ".claude", "skills"),
		filepath.Join(home, ".config", "awf", "skills"), filepath.Join(home, ".agents", "skills"), filepath.Join(home, ".claude", "skills"),
	}
	if got := f.SkillDirs(); !reflect.DeepEqual(got, want) {
		t.Errorf("skill dirs %q, want %q", got, want)
	}
	f.Env = append(f.Env, "XDG_CONFIG_HOME=/xdg")
	wantRoles := []string{
		filepath.Join(proj, ".awf", "roles"), filepath.Join(proj, ".agents", "roles"),
		"/xdg/awf/roles", filepath.Join(home, ".agents", "roles"),
	}
	if got := f.RoleDirs(); !reflect.DeepEqual(got, wantRoles) {
		t.Errorf("role dirs %q, want %q", got, wantRoles)
	}
	// AWF_CONFIG_HOME is AWF's global config directory itself
	g := &Finder{ProjectDir: proj, Env: append(append([]string{}, f.Env...), "AWF_CONFIG_HOME=/awfcfg")}
	if got := g.RoleDirs(); got[2] != "/awfcfg/roles" {
		t.Errorf("role dirs with AWF_CONFIG_HOME %q", got)
	}

	// The first directory holding the skill wins: project over home.
	testfixtures.WriteFile(t, filepath.Join(home, ".claude", "skills", "go", SkillFile), "home version")
	s, err := f.Skill("go")
	if err != nil || s.Content != "home version" {
		t.Fatalf("home skill: %+v, %v", s, err)
	}
	testfixtures.WriteFile(t, filepath.Join(proj, ".agents", "skills", "go", SkillFile), "project version")
	if s, err = f.Skill("go"); err != nil || s.Content != "project version" {
		t.Fatalf("project skill: %+v, %v", s, err)
	}
}

func TestPathOverrideIsExclusive(t *testing.T) {
	f, proj, home := finder(t)
	shared := filepath.Join(t.TempDir(), "shared")
	f.Env = append(f.Env, "AWF_SKILLS_PATH="+shared+string(os.PathListSeparator)+"~/mine")
	testfixtures.WriteFile(t, filepath.Join(proj, ".awf", "skills", "x", SkillFile), "project")
	if got, want := f.SkillDirs(), []string{shared, filepath.Join(home, "mine")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("dirs %q, want %q", got, want)
	}
	_, err := f.Skill("x")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("skill outside AWF_SKILLS_PATH: %v, want not found", err)
	}
	if !strings.Contains(err.Error(), shared) {
		t.Errorf("error %q does not name the searched directory", err)
	}
	testfixtures.WriteFile(t, filepath.Join(home, "mine", "x", SkillFile), "mine")
	if s, err := f.Skill("x"); err != nil || s.Content != "mine" {
		t.Fatalf("skill from ~/mine: %+v, %v", s, err)
	}
}

func TestMissingSkillFileIsNamed(t *testing.T) {
	f, proj, _ := finder(t)
	if err := os.MkdirAll(filepath.Join(proj, ".awf", "skills", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := f.Skill("empty")
	if err == nil || !strings.Contains(err.Error(), "has no SKILL.md") {
		t.Fatalf("err %v, want the directory without SKILL.md named", err)
	}
	for _, bad := range []string{"", "a/b", "..", "x..y"} {
		if _, err := f.Skill(bad); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Skill(%q): %v, want a bad-name error", bad, err)
		}
	}
}

func TestSkillRenderAndResources(t *testing.T) {
	f, proj, _ := finder(t)
	dir := filepath.Join(proj, "skills", "audit")
	testfixtures.WriteFile(t, filepath.Join(dir, SkillFile), "---\nname: audit\ndescription: x\n---\n\n# Audit\nCheck the config.\n")
	testfixtures.WriteFile(t, filepath.Join(dir, "scripts", "check.sh"), "#!/bin/sh\n")
	testfixtures.WriteFile(t, filepath.Join(dir, "references", "checklist.md"), "-")
	testfixtures.WriteFile(t, filepath.Join(dir, ".git", "HEAD"), "ref")
	testfixtures.WriteFile(t, filepath.Join(dir, "node_modules", "m", "x.js"), "")
	testfixtures.WriteFile(t, filepath.Join(dir, "a", "b", "c", "d", "deep.txt"), "")
	testfixtures.WriteFile(t, filepath.Join(dir, "a", "b", "c", "d", "e", "deeper.txt"), "")
	s, err := f.SkillAt("./skills/audit", proj)
	if err != nil {
		t.Fatal(err)
	}
	// .git, node_modules and what lies five levels down are left out.
	want := []string{"a/b/c/d/deep.txt", "references/checklist.md", "scripts/check.sh"}
	if !reflect.DeepEqual(s.Resources, want) {
		t.Errorf("resources %q, want %q", s.Resources, want)
	}
	got := WithSkills([]*Skill{s, {Name: "plain", Dir: "/s/plain", Content: "Be plain."}}, "Review main.go")
	got = strings.ReplaceAll(got, dir, "/project/skills/audit")
	golden.Check(t, filepath.Join("testdata", "skills-prompt.txt"), []byte(got))
	if WithSkills(nil, "p") != "p" {
		t.Error("no skills changed the prompt")
	}
}

func TestSkillAtMissing(t *testing.T) {
	f, proj, _ := finder(t)
	_, err := f.SkillAt("./nowhere", proj)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), filepath.Join(proj, "nowhere")) {
		t.Fatalf("err %v", err)
	}
}

func TestRoles(t *testing.T) {
	f, proj, home := finder(t)
	testfixtures.WriteFile(t, filepath.Join(home, ".agents", "roles", "go-senior", RoleFile), "---\nname: go-senior\n---\nYou are a senior Go engineer.\n")
	r, err := f.Role("go-senior", "/elsewhere")
	if err != nil || r.Name != "go-senior" || r.Content != "You are a senior Go engineer." {
		t.Fatalf("role by name: %+v, %v", r, err)
	}
	if got := SystemPrompt(r, "Focus on races."); got != "You are a senior Go engineer.\n\nFocus on races." {
		t.Errorf("composed %q", got)
	}
	if SystemPrompt(r, "") != r.Content || SystemPrompt(nil, "x") != "x" {
		t.Error("composition with an empty part")
	}

	wfDir := filepath.Join(proj, "flows")
	testfixtures.WriteFile(t, filepath.Join(wfDir, "roles", "reviewer", RoleFile), "Review carefully.")
	for _, ref := range []string{"./roles/reviewer", "./roles/reviewer/AGENTS.md", filepath.Join(wfDir, "roles", "reviewer")} {
		r, err := f.Role(ref, wfDir)
		if err != nil || r.Content != "Review carefully." || r.Name != "reviewer" {
			t.Errorf("role %q: %+v, %v", ref, r, err)
		}
	}
	testfixtures.WriteFile(t, filepath.Join(home, "personas", "p", RoleFile), "Home persona.")
	if r, err := f.Role("~/personas/p", wfDir); err != nil || r.Content != "Home persona." {
		t.Errorf("home-relative role: %+v, %v", r, err)
	}
	if _, err := f.Role("ghost", wfDir); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `role "ghost" not found`) {
		t.Errorf("missing role: %v", err)
	}
	if _, err := f.Role("./roles/none", wfDir); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing role path: %v", err)
	}
}

func TestStripFrontMatter(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n":                   "plain text\n",
		"---\na: 1\n---\nbody\n":         "body",
		"---\r\na: 1\r\n---\r\nbody\r\n": "body",
		"---\na: 1\n---":                 "",
		"---\nunclosed\n":                "---\nunclosed\n",
		"":                               "",
	} {
		if got := StripFrontMatter(in); got != want {
			t.Errorf("StripFrontMatter(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOversizedFileRefused(t *testing.T) {
	f, proj, _ := finder(t)
	testfixtures.WriteFile(t, filepath.Join(proj, ".awf", "skills", "big", SkillFile), strings.Repeat("x", maxFileSize+1))
	if _, err := f.Skill("big"); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("oversized SKILL.md: %v", err)
	}
}

// FuzzStripFrontMatter: the body is the text unchanged, empty, or a
// trimmed piece of the text after its front matter; never a panic.
func FuzzStripFrontMatter(f *testing.F) {
	for _, s := range []string{"---\na: 1\n---\nbody\n", "---\r\nx\r\n---\r\ny", "---\n---\n", "---", "plain", "---\nno end\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := StripFrontMatter(s)
		norm := strings.ReplaceAll(s, "\r\n", "\n")
		if got != s && got != "" && !strings.Contains(norm, got) {
			t.Fatalf("StripFrontMatter(%q) = %q: not a piece of the input", s, got)
		}
		if got != s && got != strings.TrimSpace(got) {
			t.Fatalf("StripFrontMatter(%q) = %q: a stripped body is trimmed", s, got)
		}
	})
}
