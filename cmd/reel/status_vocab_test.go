package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/serve"
)

type runRow struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// One status vocabulary everywhere: runs of each of the five statuses read
// the same in runs --json, status --json, tree --json, and serve's API
// (its run list and each run, over real HTTP), and every word is one of
// package runstatus's.
func TestStatusVocabularyEverywhere(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	writeFile(t, filepath.Join(dir, "ok.yaml"), "name: ok\nstates:\n  initial: a\n  a: {type: step, command: 'true'}\n", 0o644)
	writeFile(t, filepath.Join(dir, "fails.yaml"), "name: fails\nstates:\n  initial: a\n  a: {type: step, command: 'exit 3'}\n", 0o644)
	slow := func(name string) string {
		writeFile(t, filepath.Join(dir, name+".yaml"), "name: "+name+"\nstates:\n  initial: a\n  a: {type: step, command: 'touch "+name+".started; sleep 30'}\n", 0o644)
		return name + ".yaml"
	}
	started := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, name+".started")); err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never started", name)
			}
		}
	}
	want := map[string]string{}
	env := append(os.Environ(), "REEL_STORAGE=")
	res := runBinaryEnv(t, dir, env, "run", "ok.yaml", "--storage", storage)
	want[regexpRunID.FindStringSubmatch(res.stderr)[1]] = runstatus.Success
	res = runBinaryEnv(t, dir, env, "run", "fails.yaml", "--storage", storage)
	want[regexpRunID.FindStringSubmatch(res.stderr)[1]] = runstatus.Failure
	for _, c := range []struct {
		name   string
		sig    syscall.Signal
		status string
	}{{"cancelled", syscall.SIGINT, runstatus.Cancelled}, {"killed", syscall.SIGKILL, runstatus.Interrupted}, {"live", 0, runstatus.Running}} {
		cmd, id := startRun(t, dir, "run", slow(c.name), "--storage", storage)
		started(c.name)
		want[id] = c.status
		if c.sig == 0 {
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			continue
		}
		cmd.Process.Signal(c.sig)
		cmd.Wait()
	}
	if len(want) != len(runstatus.All) {
		t.Fatalf("%d runs for %d statuses", len(want), len(runstatus.All))
	}
	seen := map[string]bool{}
	check := func(where, id, got string) {
		t.Helper()
		if !runstatus.Valid(got) {
			t.Errorf("%s: run %s: %q is not in the vocabulary %v", where, id, got, runstatus.All)
		}
		if got != want[id] {
			t.Errorf("%s: run %s is %q, want %q", where, id, got, want[id])
		}
		seen[got] = true
	}

	var runs []runRow
	res = runBinaryEnv(t, dir, env, "runs", "--json", "--storage", storage)
	if err := json.Unmarshal([]byte(res.stdout), &runs); err != nil || len(runs) != len(want) {
		t.Fatalf("runs --json: %v %s", err, res.stdout)
	}
	for _, r := range runs {
		check("runs", r.RunID, r.Status)
	}
	for id := range want {
		var st struct{ Status string }
		res := runBinaryEnv(t, dir, env, "status", id, "--json", "--storage", storage)
		if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
			t.Fatalf("status --json: %v %s", err, res.stdout)
		}
		check("status", id, st.Status)
		var tr struct{ Run struct{ Status string } }
		res = runBinaryEnv(t, dir, env, "tree", id, "--json", "--storage", storage)
		if err := json.Unmarshal([]byte(res.stdout), &tr); err != nil {
			t.Fatalf("tree --json: %v %s", err, res.stdout)
		}
		check("tree", id, tr.Run.Status)
	}

	s, err := serve.New(context.Background(), serve.Options{Storage: storage})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var page struct{ Runs []runRow }
	get("/api/runs", &page)
	if len(page.Runs) != len(want) {
		t.Fatalf("/api/runs: %d runs", len(page.Runs))
	}
	for _, r := range page.Runs {
		check("/api/runs", r.RunID, r.Status)
	}
	for id, status := range want {
		var one struct{ Run struct{ Status string } }
		get("/api/runs/"+id, &one)
		check("/api/runs/ID", id, one.Run.Status)
		var filtered struct{ Runs []runRow }
		get("/api/runs?status="+status, &filtered)
		if len(filtered.Runs) != 1 || filtered.Runs[0].RunID != id {
			t.Errorf("/api/runs?status=%s: %+v", status, filtered.Runs)
		}
	}
	for _, st := range runstatus.All {
		if !seen[st] {
			t.Errorf("no reader said %q", st)
		}
	}
	if !slices.Equal(runstatus.All, []string{"success", "failure", "cancelled", "interrupted", "running"}) {
		t.Errorf("the vocabulary changed: %v (update the README and docs/lifecycle.md)", runstatus.All)
	}
}
