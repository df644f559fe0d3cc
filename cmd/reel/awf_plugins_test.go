package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/plugin/plugintest"
	"github.com/reelhq/reel/transcript"
)

// The AWF plugin test runs workflows using AWF's four example plugins
// (examples/plugins/awf-plugin-{echo,database,security-validator,
// event-logger} of AWF at 9971294) under reel and compares what happened
// with what AWF itself did with them, recorded in testdata/awfplugins/.
// The plugins cannot be built in CI (AWF is not on the Go module proxy):
// the test takes them from $REEL_AWF_PLUGINS (a directory holding each in
// AWF's layout) and skips without it. Re-record AWF's side with
//
//	REEL_AWF_PLUGINS=DIR scripts/awf-record-plugins.sh /path/to/awf
//
// Each case installs the plugins it needs with reel plugin install (from
// the local directory), validates the workflow and runs it. AWF's side is
// installed by copying the plugins into the project's .awf/plugins.

type awfPluginCase struct {
	name     string
	workflow string
	plugins  []string
	// log is a file the case's plugins write, compared as a sequence of
	// events.
	log string
}

var awfPluginCases = []awfPluginCase{
	{name: "echo", workflow: "awf-plugin-echo", plugins: []string{"echo"}},
	{name: "database", workflow: "awf-plugin-database", plugins: []string{"database"}},
	{name: "validator-unsafe", workflow: "awf-plugin-unsafe", plugins: []string{"security-validator"}},
	{name: "validator-safe", workflow: "awf-plugin-safe", plugins: []string{"security-validator"}},
	{name: "events", workflow: "awf-plugin-events", plugins: []string{"event-logger"}, log: ".awf/logs/event-logger.log"},
	{name: "events-failed", workflow: "awf-plugin-events-failed", plugins: []string{"event-logger"}, log: ".awf/logs/event-logger.log"},
}

// awfPluginOutcome is what a case left: validate's exit status, the run's
// outcome (as the differential test reads it), each operation state's
// response, and the events the plugin logged.
type awfPluginOutcome struct {
	Case           string                    `json:"case"`
	ValidateExit   int                       `json:"validate_exit"`
	ValidateOutput string                    `json:"validate_output,omitempty"`
	Run            awfOutcome                `json:"run"`
	Responses      map[string]map[string]any `json:"responses,omitempty"`
	Events         []awfEvent                `json:"events,omitempty"`
}

// awfEvent is one line of the event logger's log, without its timestamp
// and with its ids and durations normalized.
type awfEvent struct {
	Type     string            `json:"type"`
	Source   string            `json:"source"`
	Metadata map[string]string `json:"metadata"`
}

func TestAWFPlugins(t *testing.T) {
	plugins := os.Getenv("REEL_AWF_PLUGINS")
	if plugins == "" {
		t.Skip("REEL_AWF_PLUGINS is not set: it names a directory holding AWF's example plugins (awf-plugin-echo/, awf-plugin-database/, awf-plugin-event-logger/, awf-plugin-security-validator/), built from AWF's source")
	}
	if *awfRecord && *awfBin == "" {
		t.Fatal("-record needs -awf PATH")
	}
	for _, c := range awfPluginCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			golden := filepath.Join("testdata", "awfplugins", c.name+".json")
			if *awfRecord {
				got := runAWFPluginCase(t, c, plugins, *awfBin, false)
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (record AWF's outcomes with scripts/awf-record-plugins.sh)", err)
			}
			var awf awfPluginOutcome
			if err := json.Unmarshal(b, &awf); err != nil {
				t.Fatal(err)
			}
			got := runAWFPluginCase(t, c, plugins, reelBinary(t), true)
			if check, ok := awfPluginDeliberate[c.name]; ok {
				check(t, got, awf)
				return
			}
			compareAWFPlugin(t, got, awf)
		})
	}
}

// awfPluginDeliberate are the cases where reel does what AWF documents and
// AWF does not (docs/awf-compat.md): the golden file keeps what AWF did.
var awfPluginDeliberate = map[string]func(t *testing.T, got, awf awfPluginOutcome){
	// AWF's workflow parser refuses every type outside its own, so a
	// plugin step type never runs under AWF; reel runs it.
	"database": func(t *testing.T, got, awf awfPluginOutcome) {
		if awf.ValidateExit == 0 || awf.Run.ExitCode == 0 || len(awf.Run.Steps) != 0 {
			t.Errorf("AWF's outcome changed: %+v", awf)
		}
		if got.ValidateExit != 0 || got.Run.ExitCode != 0 || got.Run.Final != "done" ||
			got.Run.Steps["query"].Output != "Query executed successfully" ||
			got.Run.Steps["show"].Output != "Query executed successfully rows=0 at=2026-03-29T05:00:00Z\n" {
			t.Errorf("reel: %+v", got)
		}
	},
	// AWF's validate never runs its validator plugins, and its run calls
	// only ValidateWorkflow (the example checks steps): it accepts the
	// hardcoded password. reel runs ValidateWorkflow and ValidateStep in
	// both, and refuses the workflow.
	"validator-unsafe": func(t *testing.T, got, awf awfPluginOutcome) {
		if awf.ValidateExit != 0 || awf.Run.ExitCode != 0 {
			t.Errorf("AWF's outcome changed: %+v", awf)
		}
		if got.ValidateExit != 2 || !strings.Contains(got.ValidateOutput, "state login: command: Potential hardcoded secret detected in command (plugin security-validator)") ||
			!strings.Contains(got.ValidateOutput, "warning: state clean: command: Command uses potentially dangerous operation: rm (plugin security-validator)") ||
			got.Run.ExitCode != 2 || len(got.Run.Steps) != 0 {
			t.Errorf("reel: %+v", got)
		}
	},
}

func compareAWFPlugin(t *testing.T, got, awf awfPluginOutcome) {
	t.Helper()
	if got.ValidateExit != awf.ValidateExit {
		t.Errorf("validate: reel exit %d, AWF %d\n%s", got.ValidateExit, awf.ValidateExit, got.ValidateOutput)
	}
	compareOutcomes(t, got.Run, awf.Run, nil)
	for state, want := range awf.Responses {
		if fmt.Sprint(got.Responses[state]) != fmt.Sprint(want) {
			t.Errorf("state %s response: reel %v, AWF %v", state, got.Responses[state], want)
		}
	}
	if len(got.Events) != len(awf.Events) {
		t.Errorf("events: reel %d, AWF %d:\nreel %v\nAWF  %v", len(got.Events), len(awf.Events), got.Events, awf.Events)
		return
	}
	for i, a := range awf.Events {
		g := got.Events[i]
		if g.Type != a.Type || g.Source != a.Source {
			t.Errorf("event %d: reel %s from %s, AWF %s from %s", i, g.Type, g.Source, a.Type, a.Source)
		}
		// every key AWF sends, reel sends, with the same value (an error
		// message says the same in its own words)
		for k, v := range a.Metadata {
			gv, ok := g.Metadata[k]
			switch {
			case !ok:
				t.Errorf("event %d (%s): no %s (AWF: %q)", i, a.Type, k, v)
			case k == "error":
			case gv != v:
				t.Errorf("event %d (%s): %s = %q, AWF %q", i, a.Type, k, gv, v)
			}
		}
	}
}

// runAWFPluginCase runs a case with bin (AWF, or reel when reel is set).
func runAWFPluginCase(t *testing.T, c awfPluginCase, pluginsDir, bin string, reel bool) awfPluginOutcome {
	t.Helper()
	root := t.TempDir()
	ce := caseEnv{proj: filepath.Join(root, "project"), home: filepath.Join(root, "home"), storage: filepath.Join(root, "storage")}
	wfDir := filepath.Join(ce.proj, ".awf", "workflows")
	if err := os.MkdirAll(wfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join("testdata", "awfplugins", "workflows"), wfDir)
	os.MkdirAll(ce.home, 0o755)
	ce.env = append(os.Environ(),
		"HOME="+ce.home, "USER=awf-user",
		"XDG_CONFIG_HOME="+filepath.Join(ce.home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(ce.home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(ce.home, ".cache"),
		"REEL_STORAGE=", "AWF_CONFIG_PATH=", "AWF_PLUGINS_PATH=", "NO_COLOR=1", "SHELL=/bin/bash")
	installed := filepath.Join(ce.proj, ".awf", "plugins")
	for _, p := range c.plugins {
		src := filepath.Join(pluginsDir, "awf-plugin-"+p)
		if reel {
			if code, out := runTool(t, ce, bin, "plugin", "install", src); code != 0 {
				t.Fatalf("reel plugin install %s: exit %d\n%s", src, code, out)
			}
			continue
		}
		copyTree(t, src, filepath.Join(installed, "awf-plugin-"+p))
	}
	out := awfPluginOutcome{Case: c.name, Responses: map[string]map[string]any{}}
	var vout string
	out.ValidateExit, vout = runTool(t, ce, bin, "validate", c.workflow)
	if reel {
		out.ValidateOutput = awfNormalize(vout, ce)
	}
	if reel {
		code, text := runTool(t, ce, bin, "run", c.workflow, "--storage", ce.storage)
		out.Run = awfOutcome{Case: c.name, ExitCode: code, Status: "failed", Steps: map[string]awfStep{}, Out: text}
		readReelPluginRun(t, ce, text, &out)
	} else {
		code, text := runTool(t, ce, bin, "run", c.workflow, "--no-color", "--storage", ce.storage)
		out.Run = awfOutcome{Case: c.name, ExitCode: code, Status: "failed", Steps: map[string]awfStep{}}
		readAWFPluginRun(t, ce, text, &out)
	}
	if c.log != "" {
		b, err := os.ReadFile(filepath.Join(ce.proj, c.log))
		if err != nil {
			t.Fatalf("%s: %v", c.log, err)
		}
		out.Events = parseEventLog(t, awfNormalize(string(b), ce))
	}
	plugintest.NoneLeft(t, installed)
	return out
}

// readAWFPluginRun reads AWF's state file of the run.
func readAWFPluginRun(t *testing.T, ce caseEnv, text string, out *awfPluginOutcome) {
	files, _ := filepath.Glob(filepath.Join(ce.storage, "states", "*.json"))
	if len(files) == 0 {
		t.Logf("AWF left no state:\n%s", text)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Status      string
			CurrentStep string
			States      map[string]struct {
				Status   string
				ExitCode int
				Output   string
				Stderr   string
				Response map[string]any
			}
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		out.Run.Status, out.Run.Final = st.Status, st.CurrentStep
		for name, s := range st.States {
			o := s.Output
			if s.Response != nil {
				// AWF writes an operation's outputs as key=value lines in
				// Go's random map order
				lines := strings.Split(o, "\n")
				sort.Strings(lines)
				o = strings.Join(lines, "\n")
				out.Responses[name] = s.Response
			}
			out.Run.Steps[name] = awfStep{Status: s.Status, ExitCode: s.ExitCode, Output: awfNormalize(o, ce), Stderr: awfNormalize(s.Stderr, ce)}
		}
	}
}

// readReelPluginRun reads reel's transcript of the run.
func readReelPluginRun(t *testing.T, ce caseEnv, text string, out *awfPluginOutcome) {
	m := runIDRE.FindStringSubmatch(text)
	if m == nil {
		return // refused before it started
	}
	verifyStorage(t, ce.storage)
	events, err := transcript.ReadFile(filepath.Join(ce.storage, "transcripts", m[1]+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		p := events[i].Step()
		if p == nil || hookSpan[p.Name] {
			continue
		}
		switch events[i].Type {
		case transcript.StepStarted:
			out.Run.Final = p.Name
		case transcript.StepCompleted:
			if p.Kind == transcript.KindTerminal {
				continue
			}
			s := reelStep(t, p, ce)
			var r struct {
				Plugin  string         `json:"plugin"`
				Outputs map[string]any `json:"outputs"`
				Output  string         `json:"output"`
			}
			if transcript.DecodeResult(p.Result, &r) == nil && r.Plugin != "" {
				if r.Outputs != nil {
					keys := slices.Sorted(maps.Keys(r.Outputs))
					lines := make([]string, len(keys))
					for i, k := range keys {
						lines[i] = fmt.Sprintf("%s=%v", k, r.Outputs[k])
					}
					s.Output = strings.Join(lines, "\n")
					out.Responses[p.Name] = r.Outputs
				} else {
					s.Output = r.Output
				}
			}
			out.Run.Steps[p.Name] = s
		case transcript.RunCompleted:
			var rr transcript.RunResult
			if err := transcript.DecodeResult(p.Result, &rr); err != nil {
				t.Fatal(err)
			}
			out.Run.Status = map[string]string{"success": "completed", "failure": "failed", "cancelled": "cancelled"}[rr.Status]
		}
	}
}

var durationRE = regexp.MustCompile(`^[0-9.]+(ns|µs|ms|s|m|h)([0-9.]+(ns|µs|ms|s))*$`)

// parseEventLog reads the event logger's lines: "TIME | TYPE | source=S | {metadata}".
func parseEventLog(t *testing.T, log string) []awfEvent {
	var out []awfEvent
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		parts := strings.SplitN(line, " | ", 4)
		if len(parts) != 4 {
			t.Fatalf("event log line %q", line)
		}
		ev := awfEvent{Type: strings.TrimSpace(parts[1]), Source: strings.TrimSpace(strings.TrimPrefix(parts[2], "source="))}
		if err := json.Unmarshal([]byte(parts[3]), &ev.Metadata); err != nil {
			t.Fatalf("event log line %q: %v", line, err)
		}
		for k, v := range ev.Metadata {
			if durationRE.MatchString(v) && k == "duration" {
				ev.Metadata[k] = "$DURATION"
			}
		}
		out = append(out, ev)
	}
	return out
}
