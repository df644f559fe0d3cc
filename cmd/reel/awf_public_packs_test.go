package main

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The public packs AWF users install (awf-project/awf-workflow-hello and
// awf-workflow-speckit) are not in the repository (their files are not
// ours to commit). This test takes them from $REEL_AWF_PACKS, a directory
// holding a checkout of each, and AWF from $REEL_AWF, and skips without
// both. Each tool installs every pack from the stand-in GitHub (the same
// release archive for both) into a project of its own, then runs every
// workflow of the pack in the order its manifest lists them, one project
// per pack, with the fake agent CLIs of testdata/awfagents: after each
// workflow the exit status and every file of the project (outside the
// installed packs, normalized for the project's path) must be the same.
func TestAWFPublicPacks(t *testing.T) {
	packs, awf := os.Getenv("REEL_AWF_PACKS"), os.Getenv("REEL_AWF")
	if packs == "" || awf == "" {
		t.Skip("REEL_AWF_PACKS (a directory holding checkouts of awf-project/awf-workflow-hello and awf-workflow-speckit) and REEL_AWF (the AWF binary) are not both set")
	}
	assets, err := buildPackReleases(packs)
	if err != nil {
		t.Fatal(err)
	}
	if len(assets) == 0 {
		t.Fatalf("no pack in %s", packs)
	}
	srv := servePacks(t, assets)
	fakes, err := filepath.Abs(filepath.Join("testdata", "awfagents"))
	if err != nil {
		t.Fatal(err)
	}
	for _, repo := range slices.Sorted(maps.Keys(assets)) {
		name := strings.TrimPrefix(repo, "awf-workflow-")
		t.Run(name, func(t *testing.T) {
			var m struct{ Workflows []string }
			dir := packSource(t, packs, name)
			b, err := os.ReadFile(filepath.Join(dir, "manifest.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			tools := map[string]*publicPackProject{}
			for _, tool := range []string{"awf", "reel"} {
				bin := awf
				if tool == "reel" {
					bin = reelBinary(t)
				}
				p := newPublicPackProject(t, tool, bin, srv.URL, fakes)
				if code, out := runTool(t, p.ce, p.bin, "workflow", "install", "acme/"+repo); code != 0 {
					t.Fatalf("%s workflow install acme/%s: exit %d\n%s", tool, repo, code, out)
				}
				tools[tool] = p
			}
			for _, w := range m.Workflows {
				args := []string{"run", name + "/" + w, "--storage", ""}
				for _, in := range publicPackInputs[name+"/"+w] {
					args = append(args, "--input", in)
				}
				codes := map[string]int{}
				outs := map[string]string{}
				for tool, p := range tools {
					args[3] = p.storage
					codes[tool], outs[tool] = runTool(t, p.ce, p.bin, args...)
				}
				t.Logf("%s/%s: exit %d under AWF, %d under reel", name, w, codes["awf"], codes["reel"])
				if codes["awf"] != codes["reel"] {
					t.Errorf("%s/%s: exit %d under AWF, %d under reel\nAWF:\n%s\nreel:\n%s", name, w, codes["awf"], codes["reel"], outs["awf"], outs["reel"])
				}
				a, r := tools["awf"].files(t), tools["reel"].files(t)
				t.Logf("%s/%s: %d files compared", name, w, len(a))
				for _, f := range slices.Sorted(maps.Keys(unionKeys(a, r))) {
					av, aok := a[f]
					rv, rok := r[f]
					switch {
					case !aok:
						t.Errorf("%s/%s: reel wrote %s, AWF did not", name, w, f)
					case !rok:
						t.Errorf("%s/%s: AWF wrote %s, reel did not", name, w, f)
					case av != rv:
						t.Errorf("%s/%s: %s differs:\nAWF  %q\nreel %q", name, w, f, av, rv)
					}
				}
			}
		})
	}
}

// publicPackInputs are the inputs each public pack workflow requires.
var publicPackInputs = map[string][]string{
	"speckit/constitution": {"description=Keep every change small and tested"},
	"speckit/specify":      {"description=Add a login page with email and password"},
	"speckit/checklist":    {"domain=security"},
}

// packSource finds the checkout of the pack called name in dir.
func packSource(t *testing.T, dir, name string) string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "manifest.yaml"))
		var m struct{ Name string }
		if err == nil && yaml.Unmarshal(b, &m) == nil && m.Name == name {
			return filepath.Join(dir, e.Name())
		}
	}
	t.Fatalf("no checkout of pack %s in %s", name, dir)
	return ""
}

// publicPackProject is one tool's project, home and storage.
type publicPackProject struct {
	ce      caseEnv
	bin     string
	storage string
}

func newPublicPackProject(t *testing.T, tool, bin, github, fakes string) *publicPackProject {
	root := t.TempDir()
	p := &publicPackProject{bin: bin, storage: filepath.Join(root, "storage")}
	p.ce.proj, p.ce.home = filepath.Join(root, "project"), filepath.Join(root, "home")
	// the fake agents log what they were asked in the project
	// (agents-claude.log): the prompts are compared with the files
	agents := p.ce.proj
	for _, d := range []string{filepath.Join(p.ce.proj, ".awf"), p.ce.home, agents} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.ce.env = append(os.Environ(),
		"HOME="+p.ce.home, "USER=awf-user", "SHELL=/bin/bash", "NO_COLOR=1", "REEL_STORAGE=", "AWF_CONFIG_PATH=",
		"XDG_CONFIG_HOME="+filepath.Join(p.ce.home, ".config"), "XDG_DATA_HOME="+filepath.Join(p.ce.home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(p.ce.home, ".cache"), "XDG_STATE_HOME="+filepath.Join(p.ce.home, ".local", "state"),
		"GITHUB_API_URL="+github, "GITHUB_TOKEN=test-token", "GH_TOKEN=",
		"PATH="+fakes+string(filepath.ListSeparator)+os.Getenv("PATH"), "FAKE_AGENT_DIR="+agents,
		"REEL_CLAUDE_BIN=", "REEL_GEMINI_BIN=", "REEL_CODEX_BIN=")
	// a mode conversation step (speckit/clarify) gets one empty line: no
	// follow-up
	p.ce.stdin = "\n\n"
	return p
}

// volatile are the parts of a written file that differ from run to run
// whatever the tool: the project's path, run ids, dates and times.
var volatile = []*regexp.Regexp{
	uuidRE,
	regexp.MustCompile(`\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?`),
	regexp.MustCompile(`\b\d{8}-\d{6}\b`),
}

// files reads every file of the project outside the installed packs,
// normalized.
func (p *publicPackProject) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(p.ce.proj, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.ce.proj, path)
		if rel == "agents-argv.log" {
			return nil // each tool spells the same request its way
		}
		if d.IsDir() {
			// the fake agents' session files are named by a digest of
			// the prompt, which holds the project's path
			if rel == filepath.Join(".awf", "workflow-packs") || rel == ".fakeagent" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s := awfNormalize(string(b), p.ce)
		for _, re := range volatile {
			s = re.ReplaceAllString(s, "<volatile>")
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func unionKeys(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k := range a {
		out[k] = ""
	}
	for k := range b {
		out[k] = ""
	}
	return out
}
