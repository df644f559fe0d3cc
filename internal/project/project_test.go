package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
)

func TestFindWalksUp(t *testing.T) {
	t.Setenv(EnvStorage, "")
	t.Setenv(EnvAWFConfig, "")
	root := t.TempDir()
	testfixtures.WriteFile(t, filepath.Join(root, ".reel", "workflows", "w.yaml"), "name: w\n")
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := Find(deep)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Found || p.Root != root {
		t.Fatalf("Find = %+v, want root %s", p, root)
	}
	if got := p.Storage(""); got != filepath.Join(root, ".reel", "storage") {
		t.Errorf("storage = %s", got)
	}
	if got := p.Storage("/flag"); got != "/flag" {
		t.Errorf("flag storage = %s", got)
	}
	t.Setenv(EnvStorage, "/env")
	if got := p.Storage(""); got != "/env" {
		t.Errorf("env storage = %s", got)
	}
}

func TestFindAWFProjectAndUserDefault(t *testing.T) {
	t.Setenv(EnvStorage, "")
	t.Setenv(EnvAWFConfig, "")
	root := t.TempDir()
	testfixtures.WriteFile(t, filepath.Join(root, ".awf", "config.yaml"), "inputs:\n  env: staging\n  n: 3\nversion: 1\nfancy: x\n")
	p, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Found || p.Config.Inputs["env"] != "staging" || p.Config.Inputs["n"] != 3 {
		t.Fatalf("awf project: %+v %+v", p, p.Config)
	}
	if len(p.Config.Warnings) != 1 || !strings.Contains(p.Config.Warnings[0], `"fancy"`) {
		t.Errorf("warnings = %q", p.Config.Warnings)
	}

	outside := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(outside, "data"))
	q, err := Find(outside)
	if err != nil {
		t.Fatal(err)
	}
	if q.Found || q.Storage("") != filepath.Join(outside, "data", "reel", "storage") {
		t.Fatalf("outside a project: found=%v storage=%s", q.Found, q.Storage(""))
	}
}

func TestConfigMergeReelWins(t *testing.T) {
	t.Setenv(EnvAWFConfig, "")
	root := t.TempDir()
	testfixtures.WriteFile(t, filepath.Join(root, ".awf", "config.yaml"), "inputs: {env: awf, only_awf: 1}\ntelemetry: {exporter: 'a:4317', service_name: awf}\n")
	testfixtures.WriteFile(t, filepath.Join(root, ".reel", "config.yaml"), "inputs: {env: reel}\ntelemetry: {service_name: reel}\nplugins:\n  up:\n    command: ./bin/up\n    args: [x]\n    timeout: 2s\n  c:\n    command: on-path\n")
	cfg, err := LoadConfig(root)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Inputs["env"] != "reel" || cfg.Inputs["only_awf"] != 1 {
		t.Errorf("inputs = %v", cfg.Inputs)
	}
	if cfg.Telemetry != (Telemetry{Exporter: "a:4317", ServiceName: "reel"}) {
		t.Errorf("telemetry = %+v", cfg.Telemetry)
	}
	if up := cfg.Plugins["up"]; up.Command != filepath.Join(root, "bin/up") || up.Args[0] != "x" || up.Timeout != 2*time.Second {
		t.Errorf("plugin up = %+v", up)
	}
	if c := cfg.Plugins["c"]; c.Command != "on-path" {
		t.Errorf("plugin c = %+v", c)
	}
	if len(cfg.Files) != 2 {
		t.Errorf("files = %q", cfg.Files)
	}
}

func TestConfigErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"plugins:\n  a: {}\n", "has no command"},
		{"\nplugin: {}\n", "cfg:2:1: unknown key \"plugin\""},
		{"plugins:\n  a: {command: x, timeout: soon}\n", "timeout"},
		{"plugins: [1", "cfg"},
		{"- a\n", "cfg:1:1: want a mapping"},
		{"inputs: {a: {b: c}}\n", "inputs.a"},
	} {
		_, err := ParseConfig([]byte(tc.text), "cfg", "/proj", true)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "project config cfg") {
			t.Errorf("%q: err = %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
	if cfg, err := ParseConfig(nil, "cfg", "/proj", true); err != nil || len(cfg.Plugins) != 0 {
		t.Fatalf("empty config: %v %v", cfg, err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("plugins:\n  a:\n    command: ./a\n    timeout: 1s\n"), true)
	f.Add([]byte("plugins: &p {a: *p}\n"), true)
	f.Add([]byte("inputs: {a: 1, b: [x, y]}\ntelemetry: {exporter: h:1}\n"), false)
	f.Add([]byte("prices:\n  - {model: m, aliases: [n], input: 1, output: 2, cache_read: 0.1}\n"), true)
	f.Add([]byte("prices: {date: x, models: [{model: m, input: 1e400}]}\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, reel bool) {
		cfg, err := ParseConfig(b, "cfg", "/proj", reel)
		if err == nil {
			for name, p := range cfg.Plugins {
				if p.Command == "" {
					t.Fatalf("plugin %q without command", name)
				}
			}
		}
	})
}

func TestConfigPrices(t *testing.T) {
	root := t.TempDir()
	testfixtures.WriteFile(t, filepath.Join(root, "prices.yaml"), "date: 2026-11-01\nmodels:\n  - {model: gpt-5.6-luna, input: 2, output: 16}\n")
	for _, text := range []string{
		"prices: prices.yaml\n",
		"prices:\n  - {model: gpt-5.6-luna, input: 2, output: 16}\n",
		"prices:\n  date: 2026-11-01\n  models:\n    - {model: gpt-5.6-luna, input: 2, output: 16}\n",
	} {
		cfg, err := ParseConfig([]byte(text), "cfg", root, true)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if p, ok := cfg.Prices.Lookup("gpt-5.6-luna"); !ok || p.Output != 16 {
			t.Errorf("%q: prices = %+v", text, cfg.Prices)
		}
	}
	for text, want := range map[string]string{
		"prices: missing.yaml\n":                 "cfg:1:9: prices: open",
		"\nprices:\n  - {model: a, input: -3}\n": "cfg:3:3: prices:",
		"prices: 3\n":                            "prices:",
	} {
		if _, err := ParseConfig([]byte(text), "cfg", root, true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", text, err, want)
		}
	}
	cfg, err := ParseConfig([]byte("prices: prices.yaml\n"), "awf", root, false)
	if err != nil || cfg.Prices != nil || len(cfg.Warnings) != 1 {
		t.Errorf("AWF's file: prices %v warnings %q err %v", cfg.Prices, cfg.Warnings, err)
	}
}
