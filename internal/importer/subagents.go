// Claude Code subagents: a session's Task calls ran agents whose logs
// Claude Code writes beside it, <session>/subagents/agent-<id>.jsonl. They
// are imported as child runs of the session, linked as sub-workflows are.

package importer

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/flowstudio"
	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// subagentFiles lists the subagent logs of the session log at path, by
// agent id, leaving out Claude Code's own context compressions
// (agent-acompact-*), which hold no exchange of the user's.
func subagentFiles(path string) map[string]string {
	dir := filepath.Join(strings.TrimSuffix(path, filepath.Ext(path)), "subagents")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	files := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutPrefix(strings.TrimSuffix(name, ".jsonl"), "agent-")
		if !ok || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() || strings.HasPrefix(id, "acompact") {
			continue
		}
		files[id] = filepath.Join(dir, name)
	}
	return files
}

// isSubagentLog reports whether path is a subagent's log
// (<session>/subagents/agent-<id>.jsonl) and the session log it belongs
// to, whether or not it exists.
func isSubagentLog(path string) (session string, ok bool) {
	dir := filepath.Dir(path)
	base := filepath.Base(path)
	if filepath.Base(dir) != "subagents" || !strings.HasPrefix(base, "agent-") || filepath.Ext(base) != ".jsonl" {
		return "", false
	}
	return filepath.Dir(dir) + ".jsonl", true
}

// dropSubagentLogs leaves out of files the subagent logs whose session log
// is in files too: they are imported with it.
func dropSubagentLogs(files []string) []string {
	in := map[string]bool{}
	for _, f := range files {
		in[f] = true
	}
	out := files[:0:0]
	for _, f := range files {
		if s, ok := isSubagentLog(f); ok && in[s] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// withSubagents folds the subagent logs of a session into its source's
// fingerprint, so that a subagent that wrote more is a changed source.
func withSubagents(src Source, files map[string]string) (Source, error) {
	if len(files) == 0 {
		return src, nil
	}
	ids := make([]string, 0, len(files))
	for id := range files {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", src.SHA256)
	for _, id := range ids {
		n, err := hashNamedFile(h, id, files[id])
		if err != nil {
			return Source{}, err
		}
		src.Size += n
	}
	src.SHA256 = hex.EncodeToString(h.Sum(nil))
	return src, nil
}

// subagent is one subagent log, normalized.
type subagent struct {
	id     string
	events []transcript.ExchangeEvent
	res    *normalize.Result
}

// readSubagents normalizes the subagent logs; one that does not read is a
// warning.
func readSubagents(files map[string]string) (subs map[string]*subagent, warnings []string) {
	subs = map[string]*subagent{}
	for id, path := range files {
		events, res, err := normalizeSubagent(path)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("subagent %s: %v", id, err))
			continue
		}
		subs[id] = &subagent{id: id, events: events, res: res}
	}
	return subs, warnings
}

func normalizeSubagent(path string) ([]transcript.ExchangeEvent, *normalize.Result, error) {
	events, res, err := readAll(path, normalize.NewSubagentParser)
	if err != nil {
		return nil, nil, err
	}
	return normalize.TextFirst(events), res, nil
}

// agentIDText is how a Task result names its subagent in its text.
var agentIDText = regexp.MustCompile(`agentId: ([A-Za-z0-9@._-]+)`)

// taskAgents maps each Task call of the session log at path to the
// subagent that ran it: the agentId of the line's toolUseResult, or the
// "agentId: <id>" its result's text ends with.
func taskAgents(path string) map[string]string {
	f, err := safefile.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	calls := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), "agentId") {
			continue
		}
		var id string
		if v, ok, _ := rawjson.Lookup(line, []string{"toolUseResult", "agentId"}); ok {
			id = rawjson.Str(v)
		}
		content, ok, _ := rawjson.Lookup(line, []string{"message", "content"})
		if !ok {
			continue
		}
		_ = rawjson.EachElem(content, func(b []byte) {
			v, ok, _ := rawjson.Field(b, "tool_use_id")
			if !ok {
				return
			}
			call := rawjson.Str(v)
			agent := id
			if m := agentIDText.FindSubmatch(b); agent == "" && m != nil {
				agent = string(m[1])
			}
			if agent != "" {
				calls[call] = agent
			}
		})
	}
	return calls
}

// linkSubagents makes each subagent a child run of the session t: a step
// of kind call_workflow (subagent-N, named after the Task's description)
// opens at its Task call and closes at the call's result, its
// step.call_workflow events naming the child. The step sits beside the
// agent step, not inside it, because an agent step's figures are its own
// and a composite's add up its subtree: so the run's cost and tokens count
// the subagents', in every view. A
// subagent whose Task call is not found is linked at the end of the agent
// step, so that it is not lost. The run's usage includes its subagents'.
func linkSubagents(t tree, subs map[string]*subagent, calls map[string]string) (tree, []string) {
	byCall := map[string]*subagent{}
	for call, id := range calls {
		if s := subs[id]; s != nil {
			byCall[call] = s
		}
	}
	placed := map[string]bool{}
	var warnings []string
	n := 0
	type open struct{ path, name string }
	opened := map[string]open{}
	out := make([]transcript.ExchangeEvent, 0, len(t.Events)+4*len(subs))
	start := func(s *subagent, name string, ts time.Time) open {
		n++
		o := open{path: fmt.Sprintf("subagent-%d", n), name: name}
		placed[s.id] = true
		out = append(out,
			transcript.ExchangeEvent{Type: transcript.StepStarted, Path: o.path, Timestamp: ts,
				Payload: &transcript.StepPayload{Name: o.name, Kind: transcript.KindCallWorkflow}},
			transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: o.path, ChildRunID: s.id, Timestamp: ts,
				Payload: &transcript.StepPayload{Name: o.name, Kind: transcript.KindCallWorkflow}})
		return o
	}
	end := func(s *subagent, o open, ts time.Time) {
		errMsg := ""
		if s.res.IsError {
			errMsg = s.res.Error
		}
		out = append(out,
			transcript.ExchangeEvent{Type: transcript.CallWorkflowCompleted, Path: o.path, ChildRunID: s.id, Timestamp: ts,
				Payload: &transcript.StepPayload{Name: o.name, Kind: transcript.KindCallWorkflow, Error: errMsg}},
			transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: o.path, Timestamp: ts,
				Payload: &transcript.StepPayload{Name: o.name, Kind: transcript.KindCallWorkflow, Error: errMsg}})
	}
	names := map[string]string{}
	for _, ev := range t.Events {
		tp := ev.Tool()
		switch {
		case ev.Type == transcript.ToolResult && tp != nil && byCall[tp.CallID] != nil:
			if o, ok := opened[tp.CallID]; ok {
				end(byCall[tp.CallID], o, ev.Timestamp)
				delete(opened, tp.CallID)
			}
		case ev.Type == transcript.StepCompleted && ev.Path == "agent":
			for call, o := range opened { // calls never answered
				end(byCall[call], o, ev.Timestamp)
			}
			ids := make([]string, 0, len(subs))
			for id := range subs {
				if !placed[id] {
					ids = append(ids, id)
				}
			}
			sort.Strings(ids)
			for _, id := range ids {
				warnings = append(warnings, fmt.Sprintf("subagent %s: no Task call of the session names it; linked at the session's end", id))
				end(subs[id], start(subs[id], "subagent "+id, ev.Timestamp), ev.Timestamp)
			}
		case ev.Type == transcript.RunCompleted:
			if sp := ev.Step(); sp != nil {
				if rr, ok := sp.Result.(transcript.RunResult); ok {
					for id := range placed {
						rr.Usage.Add(subs[id].res.Agent.Usage)
					}
					c := *sp
					c.Result = rr
					ev.Payload = &c
				}
			}
		}
		out = append(out, ev)
		if ev.Type == transcript.ToolCall && tp != nil && byCall[tp.CallID] != nil && !placed[byCall[tp.CallID].id] {
			name := taskName(tp.Input, byCall[tp.CallID].id)
			names[byCall[tp.CallID].id] = name
			opened[tp.CallID] = start(byCall[tp.CallID], name, ev.Timestamp)
		}
	}
	t.Events = out
	t.Ref = "session"
	ids := make([]string, 0, len(placed))
	for id := range placed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := subs[id]
		name := names[id]
		if name == "" {
			name = "subagent " + id
		}
		// A subagent's log has times, as its session's has; one without
		// any is placed at its session's start.
		child := sessionTree(name, s.events, s.res, t.start())
		t.Children = append(t.Children, flowstudio.ChildRun{RunID: id, ParentRunID: t.Ref, Events: child.Events})
	}
	return t, warnings
}

// taskName names a subagent after its Task call: "<type>: <description>".
func taskName(input any, id string) string {
	var in struct {
		Description  string `json:"description"`
		SubagentType string `json:"subagent_type"`
	}
	if transcript.DecodeResult(input, &in) != nil || in.Description == "" {
		return "subagent " + id
	}
	name := oneLine(in.Description, 72)
	if in.SubagentType != "" {
		name = in.SubagentType + ": " + name
	}
	return name
}
