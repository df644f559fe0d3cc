package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// The differential test runs AWF's fixtures under reel and compares the
// outcome with the one AWF produced: the exit status, the run's status,
// the state it ended in, and each state's status, exit code and output
// (the last execution of each, which is what AWF keeps). AWF's outcomes
// are golden files in testdata/awf/, recorded once with
//
//	scripts/awf-record.sh /path/to/awf
//
// which runs this test with -record: AWF itself runs each case, in a
// throwaway project with its HOME and XDG directories isolated, and the
// test writes what it did. Without -record the test runs reel.
var (
	awfBin    = flag.String("awf", "", "AWF binary the differential test records from (with -record)")
	awfRecord = flag.Bool("record", false, "record AWF's outcomes into testdata/awf instead of comparing reel's")
)

// awfCase is one run of a fixture.
type awfCase struct {
	// name is the golden file's name: the fixture, and after a slash what
	// sets this run apart ("validation-enums/bad-value").
	name   string
	inputs []string
	// env is added to the environment of both tools.
	env []string
	// files are written into the project before the run (relative
	// paths), such as an .awf/config.yaml.
	files map[string]string
	// server: the run gets a local HTTP server's URL as input url.
	server bool
	// collect names files (relative to the project) whose content after
	// the run is part of the outcome, such as a log the hooks append to.
	collect []string
	// agents: testdata/awfagents (fake claude, gemini and codex CLIs)
	// comes first on PATH, and what each was asked is collected
	// (agents-PROVIDER.log, written by the fakes in the project).
	agents bool
	// anthropic: ANTHROPIC_BASE_URL points at a local server answering
	// chat completions (reel's anthropic provider; AWF has none).
	anthropic bool
	// stdin is the run's standard input: a mode conversation step's
	// follow-up messages, one a line, an empty line ending each
	// conversation.
	stdin string
	// own: the workflow is not one of AWF's fixtures but reel's, in
	// testdata/awfown/, for what the corpus leaves out (hooks, loops,
	// when, capture and depends_on together; failing hooks; a missing
	// required variable; step templates).
	own bool
	// workflow is what the tools run when it is not the fixture's name:
	// a name, a path or PACK/WORKFLOW.
	workflow string
	// home are files written below the case's home directory (global
	// workflows, prompts, scripts), relative paths.
	home map[string]string
	// install are the argument lists of `workflow install` commands each
	// tool runs before the run, against a stand-in GitHub serving the
	// packs of testdata/awfpacks as releases (packServer).
	install [][]string
}

func (c awfCase) fixture() string { f, _, _ := strings.Cut(c.name, "/"); return f }

// target is what the tools run.
func (c awfCase) target() string {
	if c.workflow != "" {
		return c.workflow
	}
	return c.fixture()
}

// awfCases are the fixtures that run without an agent CLI, the network or
// a terminal. Inputs are given where a fixture requires them; some
// fixtures run twice, once to reach an input error (exit 1).
var awfCases = []awfCase{
	{name: "diagram-all-types"},
	{name: "diagram-parallel"},
	{name: "diagram-simple"},
	{name: "dry-run-complete", inputs: []string{"file_path=data.txt"}, env: []string{"API_KEY=k", "DATABASE_URL=postgres://db"}, files: map[string]string{"data.txt": "one line\n"}},
	{name: "dry-run-with-dir"},
	{name: "example-simple", inputs: []string{"file_path=data.txt"}, files: map[string]string{"data.txt": "one\ntwo\n"}},
	{name: "exit-execution-error"},
	{name: "exit-user-error", inputs: []string{"email=ann@example.com"}},
	{name: "exit-user-error/missing-input"},
	{name: "expr-break-when"},
	{name: "expr-context-namespace"},
	{name: "expr-loop-namespace"},
	{name: "expr-lowercase-context"},
	{name: "expr-lowercase-state"},
	{name: "expr-mixed-casing"},
	{name: "expr-multiple-errors"},
	{name: "expr-nil-safety"},
	{name: "expr-pascalcase-state"},
	{name: "expr-workflow-fields"},
	{name: "hints-command-not-found"},
	{name: "hints-file-typo"},
	{name: "hints-missing-input", inputs: []string{"user_name=ann", "user_email=ann@example.com"}},
	{name: "hints-missing-input/missing-input", inputs: []string{"user_name=ann"}},
	{name: "hooks-failure", env: []string{"HOOK_LOG_FILE=hooks.log"}, collect: []string{"hooks.log"}},
	{name: "hooks-lifecycle", env: []string{"HOOK_LOG_FILE=hooks.log"}, collect: []string{"hooks.log"}},
	{name: "hooks-variables", inputs: []string{"test_input=hello"}, env: []string{"HOOK_LOG_FILE=hooks.log"}, collect: []string{"hooks.log"}},
	{name: "http-get-test", server: true},
	{name: "http-post-test", inputs: []string{"method=POST", "body={\"k\":\"v\"}"}, server: true},
	{name: "http-put-test", inputs: []string{"method=PUT", "body=replaced"}, server: true},
	{name: "http-delete-test", inputs: []string{"method=DELETE"}, server: true},
	{name: "input-collection-test", inputs: []string{"required_string=hi"}},
	{name: "input-collection-test/not-an-integer", inputs: []string{"required_string=hi", "optional_number=many"}},
	{name: "input-enum-test", inputs: []string{"environment=staging"}},
	{name: "input-optional-test", inputs: []string{"required_name=bob"}},
	{name: "interactive-test"},
	{name: "config-interactive-test", files: map[string]string{".awf/config.yaml": "inputs:\n  api_key: from-config\n  model: small\n  unrelated: ignored\n"}},
	{name: "config-interactive-test/flag-overrides-config", inputs: []string{"model=large"}, files: map[string]string{".awf/config.yaml": "inputs:\n  api_key: from-config\n  model: small\n"}},
	{name: "loop-dynamic", inputs: []string{"limit=3"}},
	{name: "loop-dynamic-arithmetic", inputs: []string{"pages=2", "retries_per_page=3"}},
	{name: "loop-dynamic-env", env: []string{"LOOP_LIMIT=3"}},
	{name: "loop-foreach"},
	{name: "loop-json-child", inputs: []string{`item={"name":"S1","type":"fix","files":["a.go","b.go"]}`, "index=4"}},
	{name: "loop-json-serialization"},
	{name: "loop-lowercase"},
	{name: "loop-nested"},
	{name: "loop-while"},
	{name: "loop-while-transitions"},
	{name: "lowercase"},
	{name: "pascalcase"},
	{name: "retry-audit"},
	{name: "script-file-shebang"},
	{name: "secrets-in-errors"},
	{name: "signal-long-running"},
	{name: "signal-multi-step"},
	{name: "signal-parallel"},
	{name: "subworkflow-child", inputs: []string{"message=hi"}},
	{name: "subworkflow-child/prompt-input", inputs: []string{"message=@prompts/local/nested/local-deep.md"}},
	{name: "subworkflow-child/prompt-input-missing", inputs: []string{"message=@prompts/local/none.md"}},
	{name: "subworkflow-circular"},
	{name: "subworkflow-circular-a"},
	{name: "subworkflow-nested-a", inputs: []string{"data=d"}},
	{name: "subworkflow-simple", inputs: []string{"input_message=hello"}},
	{name: "test-loop-simple"},
	{name: "test-when"},
	{name: "uppercase-valid", inputs: []string{"cmd=echo from-input"}},
	{name: "valid-full", inputs: []string{"file_path=data.txt"}, env: []string{"API_KEY=k", "DATABASE_URL=postgres://db"}, files: map[string]string{"data.txt": "content\n"}},
	{name: "valid-parallel"},
	{name: "valid-simple"},
	{name: "valid-with-hooks"},
	{name: "validation-enums", inputs: []string{"environment=staging"}},
	{name: "validation-enums/bad-value", inputs: []string{"environment=dev"}},
	{name: "validation-numeric", inputs: []string{"port=8080"}},
	{name: "validation-numeric/below-minimum", inputs: []string{"port=80"}},
	{name: "validation-patterns", inputs: []string{"email=ann@example.com"}},
	{name: "validation-patterns/no-match", inputs: []string{"email=not-an-email"}},

	// The agent fixtures run against the fake CLIs of testdata/awfagents.
	// A mode conversation step reads its follow-ups from stdin, a line
	// each, until an empty line; each fixture gets a second turn where
	// the order of its steps is fixed (not in conversation-parallel,
	// whose branches read stdin at once).
	{name: "agent-simple", agents: true, inputs: []string{"task=list the files"}},
	{name: "conversation-simple", agents: true, inputs: []string{"task=review main.go"}, stdin: "now shorter\n\n"},
	{name: "conversation-continue-from", agents: true, inputs: []string{"task=the build is slow"}, stdin: "why?\n\nand then?\n\n"},
	{name: "conversation-multiturn", agents: true, inputs: []string{"initial_request=explain goroutines"}, stdin: "an example\n\nanother\n\n"},
	{name: "conversation-error", agents: true, inputs: []string{"task=count the lines"}, stdin: "\n\n"},
	{name: "conversation-error/fails", agents: true, inputs: []string{"task=FAIL-ALWAYS"}, stdin: "\n\n"},
	{name: "conversation-error/flaky", agents: true, inputs: []string{"task=FAIL-ONCE"}, stdin: "\n\n"},
	{name: "conversation-error/no-input", agents: true, inputs: []string{"task=count the lines"}},
	{name: "conversation-inject-context", agents: true, inputs: []string{"task=hello"}, stdin: "  spaced reply  \n\n"},
	{name: "conversation-max-turns", agents: true, inputs: []string{"task=caching"}, stdin: "one\n\ntwo\n\nthree\n\nfour\n\n"},
	{name: "conversation-parallel", agents: true, inputs: []string{"task=queues"}, stdin: "\n\n\n\n"},
	{name: "conversation-stop-condition", agents: true, inputs: []string{"task=ship it"}, stdin: "COMPLETE\n\n\nlast\n\n\n"},
	{name: "conversation-window", agents: true, inputs: []string{"task=testing"}, stdin: "a\nb\nc\n\n\n\n"},
	{name: "conversation-simple/exit", agents: true, inputs: []string{"task=review main.go"}, stdin: "exit\n\n"},
	{name: "expr-agent-fields", agents: true, anthropic: true},

	{name: "awf-agent-fields", own: true, agents: true},
	{name: "awf-single-system", own: true, agents: true},
	{name: "awf-agent-failures", own: true, agents: true},
	{name: "awf-agent-outputs", own: true, agents: true, stdin: "more\nand more\n\n"},
	{name: "awf-conversation-limits", own: true, agents: true, stdin: "typed\n\n\n"},
	{name: "awf-interplay", own: true, collect: []string{"hooks.log"}},
	{name: "awf-hook-failures", own: true, collect: []string{"hooks.log"}},
	{name: "awf-hook-retry", own: true, collect: []string{"hooks.log"}},
	{name: "awf-start-hook-fails", own: true, collect: []string{"hooks.log"}},
	{name: "awf-error-hook", own: true, collect: []string{"hooks.log"}},
	{name: "awf-env-missing", own: true},
	{name: "awf-env-missing/set", own: true, env: []string{"REEL_AWF_SURELY_UNSET=set"}},
	{name: "awf-templates-scripts", own: true},
	{name: "awf-loop-failures", own: true, collect: []string{"count"}},
	{name: "awf-parallel-failures", own: true},
	{name: "awf-sub-hooks", own: true, collect: []string{"hooks.log"}},
	{name: "awf-timeout", own: true, collect: []string{"hooks.log"}},
	{name: "awf-retry-codes", own: true, collect: []string{"cnt"}},
	{name: "awf-untyped-inputs/number", own: true, inputs: []string{"n=5"}},
	{name: "awf-untyped-inputs/boolean", own: true, inputs: []string{"n=1", "f=TRUE"}},
	{name: "awf-untyped-inputs/neither", own: true, inputs: []string{"n=1.5", "f=yes"}},
	// issue 19: the bugs of the second round, and its smaller differences
	{name: "awf-large-output", own: true, collect: []string{"items.log"}},
	{name: "awf-timeout-retry", own: true, collect: []string{"tries"}},
	{name: "awf-http-status", own: true, server: true},
	{name: "awf-when-default", own: true},
	{name: "awf-when-default/fancy", own: true, inputs: []string{"mode=fancy"}},
	{name: "awf-undeclared-inputs", own: true, inputs: []string{"extra=1", "mode=second", "mode=third"}},
	{name: "awf-missing-script", own: true},
	{name: "awf-break-when-item", own: true},
	{name: "awf-exit-codes", own: true, env: []string{"USER="}},

	// Packs, installed by each tool from a stand-in GitHub (the releases
	// API and the release's assets) and run by PACK/WORKFLOW; and
	// workflows, prompts and scripts in AWF's global places.
	{name: "pack-hi/hi", own: true, install: [][]string{{"acme/awf-workflow-hi"}}, workflow: "hi/hi", inputs: []string{"who=pack"}},
	{name: "pack-hi/shout", own: true, install: [][]string{{"acme/awf-workflow-hi"}}, workflow: "hi/shout"},
	{name: "pack-hi/global", own: true, install: [][]string{{"acme/awf-workflow-hi@1.2.0", "--global"}}, workflow: "hi/hi"},
	{name: "pack-hi/unknown-workflow", own: true, install: [][]string{{"acme/awf-workflow-hi"}}, workflow: "hi/nope"},
	{name: "pack-kit/init", own: true, install: [][]string{{"acme/awf-workflow-kit"}}, workflow: "kit/init",
		collect: []string{".awf/templates/kit/spec-template.md", ".awf/templates/kit/plan-template.md"}},
	{name: "pack-kit/init-as-file", own: true, install: [][]string{{"acme/awf-workflow-kit"}}, workflow: ".awf/workflow-packs/kit/workflows/init.yaml",
		collect: []string{".awf/templates/kit/spec-template.md", ".awf/templates/kit/plan-template.md"}},
	{name: "pack-kit/make", own: true, agents: true, install: [][]string{{"acme/awf-workflow-kit"}}, workflow: "kit/make", inputs: []string{"description=Add Login"},
		files: map[string]string{".awf/templates/kit/spec-template.md": "# Spec: {{FEATURE}}\n"}, collect: []string{"specs/add-login/spec.md"}},
	{name: "pack-kit/make-empty", own: true, agents: true, install: [][]string{{"acme/awf-workflow-kit"}}, workflow: "kit/make", inputs: []string{"description=Bare"},
		collect: []string{"specs/bare/spec.md"}},
	{name: "pack-kit/override", own: true, agents: true, install: [][]string{{"acme/awf-workflow-kit"}}, workflow: "kit/make", inputs: []string{"description=Mine"},
		files: map[string]string{
			".awf/scripts/kit/create.sh":      "#!/bin/sh\nmkdir -p specs/mine && echo overridden > specs/mine/spec.md\necho SPEC_FILE=specs/mine/spec.md\n",
			".awf/prompts/kit/make/system.md": "The user's own prompt for {{.inputs.description}}.\n",
		},
		collect: []string{"specs/mine/spec.md"}},
	{name: "pack-kit/chain", own: true, install: [][]string{{"acme/awf-workflow-kit"}}, workflow: "kit/chain"},
	{name: "global-call", own: true, workflow: "awf-global-parent", home: map[string]string{
		".config/awf/workflows/awf-global-child.yaml": "name: awf-global-child\ninputs:\n  - name: msg\n    type: string\n    required: true\nstates:\n  initial: say\n  say:\n    type: step\n    command: echo \"child got {{.inputs.msg}}\"\n    on_success: done\n  done:\n    type: terminal\n",
	}},
	{name: "global-run", own: true, workflow: "awf-global-only", home: map[string]string{
		".config/awf/workflows/awf-global-only.yaml": "name: awf-global-only\nstates:\n  initial: a\n  a:\n    type: step\n    command: '\"{{.awf.scripts_dir}}/hello.sh\" from-global'\n    on_success: b\n  b:\n    type: step\n    script_file: \"{{.awf.scripts_dir}}/hello.sh\"\n    on_success: done\n  done:\n    type: terminal\n",
		".config/awf/scripts/hello.sh":               "#!/bin/sh\necho \"global script ${1:-no-arg}\"\n",
	}},
	{name: "global-run/local-script", own: true, workflow: "awf-global-only", home: map[string]string{
		".config/awf/workflows/awf-global-only.yaml": "name: awf-global-only\nstates:\n  initial: a\n  a:\n    type: step\n    command: '\"{{.awf.scripts_dir}}/hello.sh\" from-global'\n    on_success: done\n  done:\n    type: terminal\n",
		".config/awf/scripts/hello.sh":               "#!/bin/sh\necho \"global script $1\"\n",
	}, files: map[string]string{".awf/scripts/hello.sh": "#!/bin/sh\necho \"project script $1\"\n"}},
	{name: "global-env", own: true, workflow: "awf-shadowed", env: []string{"AWF_WORKFLOWS_PATH=envflows"}, files: map[string]string{
		"envflows/awf-shadowed.yaml":       "name: from-env\nstates:\n  initial: a\n  a:\n    type: step\n    command: echo from env\n    on_success: done\n  done:\n    type: terminal\n",
		".awf/workflows/awf-shadowed.yaml": "name: from-project\nstates:\n  initial: a\n  a:\n    type: step\n    command: echo from project\n    on_success: done\n  done:\n    type: terminal\n",
	}},
	{name: "global-prompt-input", own: true, workflow: "awf-global-child", inputs: []string{"msg=@prompts/team/greeting.md"}, home: map[string]string{
		".config/awf/workflows/awf-global-child.yaml": "name: awf-global-child\ninputs:\n  - name: msg\n    type: string\n    required: true\nstates:\n  initial: say\n  say:\n    type: step\n    command: echo \"child got {{.inputs.msg}}\"\n    on_success: done\n  done:\n    type: terminal\n",
		".config/awf/prompts/team/greeting.md":        "hello from the global prompts\n",
	}},
}

// awfOutOfScope are the fixtures AWF accepts that the differential test
// does not run, and why.
var awfOutOfScope = map[string]string{
	"subworkflow-circular-b": "the same cycle as subworkflow-circular-a, entered from the other side",
	"subworkflow-nested-b":   "run as the child of subworkflow-nested-a",
	"subworkflow-nested-c":   "run as the grandchild of subworkflow-nested-a",
	"valid-with-dir":         "its first state runs in /tmp/project: the outcome depends on whether that directory exists on the machine",
	"secrets-masked":         "tests AWF's masking of secret-named inputs in step output; reel masks only with --mask-secrets, by value (docs/decisions.md §9), see docs/awf-compat.md",
}

// awfDifference is a case where reel's outcome differs from AWF's on
// purpose: why, and check, which asserts what reel does instead.
type awfDifference struct {
	why   string
	check func(t *testing.T, got, awf awfOutcome)
}

// awfDeliberate are cases where reel's outcome differs from AWF's on
// purpose (docs/awf-compat.md says why). The golden file still holds what
// AWF did; check asserts what reel does instead.
var awfDeliberate = map[string]awfDifference{
	"input-collection-test/not-an-integer":          inputExit1,
	"validation-enums/bad-value":                    inputExit1,
	"validation-numeric/below-minimum":              inputExit1,
	"validation-patterns/no-match":                  inputExit1,
	"config-interactive-test":                       awfConfigInputs("small"),
	"config-interactive-test/flag-overrides-config": awfConfigInputs("large"),
	"awf-env-missing": {
		why: "a variable the workflow's env list names is required: reel refuses to start the run (exit 1), AWF ignores the list",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.ExitCode != 1 || len(got.Steps) != 0 || awf.ExitCode != 0 || awf.Steps["a"].Output != "ran\n" {
				t.Errorf("reel exit %d with %d states (want 1 before any state); AWF exit %d %+v", got.ExitCode, len(got.Steps), awf.ExitCode, awf.Steps)
			}
			if !strings.Contains(got.Out, "REEL_AWF_SURELY_UNSET") {
				t.Errorf("reel's message does not name the variable:\n%s", got.Out)
			}
		},
	},
	"awf-parallel-failures": {
		why: "AWF loses a failed parallel branch's output and exit code (its state says failed, exit 0, no output) and records a branch it stopped with exit 0 or -1; reel keeps what the branch printed and its exit code, and a stopped branch's 130",
		check: func(t *testing.T, got, awf awfOutcome) {
			lost := map[string]awfStep{
				"b_bad":  {Status: "failed", ExitCode: 3, Output: "b_bad\n"},
				"a_bad":  {Status: "failed", ExitCode: 4, Output: "a_bad\n"},
				"a_slow": {Status: "failed", ExitCode: 130},
				"y_slow": {Status: "failed", ExitCode: 130},
			}
			g, a := got, awf
			g.Steps, a.Steps = maps.Clone(got.Steps), maps.Clone(awf.Steps)
			for n, want := range lost {
				if s := g.Steps[n]; s.Status != want.Status || s.ExitCode != want.ExitCode || s.Output != want.Output {
					t.Errorf("reel's %s: %+v, want %+v", n, s, want)
				}
				if s := a.Steps[n]; s.Status != "failed" || s.Output != "" || (s.ExitCode != 0 && s.ExitCode != -1) {
					t.Errorf("AWF's %s changed: %+v", n, s)
				}
				delete(g.Steps, n)
				delete(a.Steps, n)
			}
			compareOutcomes(t, g, a, nil)
		},
	},
	"awf-timeout": {
		why: "a run a step's timeout ends is failed in reel (workflow_error runs) and cancelled in AWF (workflow_cancel runs), both exit 3; a timed-out command's exit code is 124 in reel (as timeout(1)), -1 in AWF",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.ExitCode != 3 || got.Status != "failed" || got.Final != "slow2" || got.Files["hooks.log"] != "err slow2 execution\n" ||
				got.Steps["handle"].Output != "handled failed 124 [start]\n" || got.Steps["slow"].ExitCode != 124 || got.Steps["slow2"].ExitCode != 124 {
				t.Errorf("reel: %+v", got)
			}
			if awf.ExitCode != 3 || awf.Status != "cancelled" || awf.Files["hooks.log"] != "cancel hook\n" || awf.Steps["handle"].Output != "handled failed -1 [start]\n" {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
		},
	},
	"awf-timeout-retry": {
		why: "a timed-out command's exit code is 124 in reel (as timeout(1)), -1 in AWF; the attempts are AWF's (one: the timeout bounds the whole step)",
		check: func(t *testing.T, got, awf awfOutcome) {
			if g, a := got.Steps["slow"], awf.Steps["slow"]; g.ExitCode != 124 || a.ExitCode != -1 || g.Status != a.Status {
				t.Errorf("slow: reel %+v, AWF %+v", g, a)
			}
			compareOutcomes(t, withoutExitCodes(got, "slow"), withoutExitCodes(awf, "slow"), nil)
		},
	},
	"awf-exit-codes": {
		why: "a command killed by a signal exits 128+n in reel (143 for SIGTERM, as a shell's $? says), -1 in AWF, which loses the signal; a state whose dir does not exist exits 1 in reel, as cd does, and 0 in AWF, which reads as success for a command that never ran",
		check: func(t *testing.T, got, awf awfOutcome) {
			if g, a := got.Steps["killed"], awf.Steps["killed"]; g.ExitCode != 143 || a.ExitCode != -1 || g.Status != "failed" || g.Output != a.Output {
				t.Errorf("killed: reel %+v, AWF %+v", g, a)
			}
			if g, a := got.Steps["nodir"], awf.Steps["nodir"]; g.ExitCode != 1 || a.ExitCode != 0 || g.Status != "failed" || a.Status != "failed" || g.Output != "" {
				t.Errorf("nodir: reel %+v, AWF %+v", g, a)
			}
			if g, a := got.Steps["report"].Output, awf.Steps["report"].Output; g != "killed 143 failed nodir 1 failed user []\n" || a != "killed -1 failed nodir 0 failed user []\n" {
				t.Errorf("report: reel %q, AWF %q", g, a)
			}
			if got.ExitCode != awf.ExitCode || got.Final != awf.Final || got.Status != awf.Status {
				t.Errorf("run: reel %+v, AWF %+v", got, awf)
			}
		},
	},
	"pack-kit/override": {
		why: "a user's override of one of a pack's scripts (.awf/scripts/kit/create.sh) hides, in AWF, every other script of the pack from the pack's commands (AWF picks one directory for all of them); reel looks for each file in turn, so the pack's check.sh still runs",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.ExitCode != 0 || got.Final != "done" || got.Steps["create"].Output != awf.Steps["create"].Output || got.Steps["draft"].Output != awf.Steps["draft"].Output ||
				got.Steps["record"].Output != "CHECK=ok 1 lines\n" || got.Files["specs/mine/spec.md"] != "overridden\n" {
				t.Errorf("reel: %+v", got)
			}
			if awf.Steps["record"].ExitCode != 127 || awf.Files["specs/mine/spec.md"] != "overridden\n" || awf.Steps["draft"].Output == "" {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
		},
	},
	"pack-kit/chain": {
		why: "AWF's call_workflow cannot run a pack's workflow (its run looks the name up among the project's and the global workflows only, after its own check found it in the pack): exit 1 at the call. reel runs it, by bare name from inside the pack and by PACK/WORKFLOW, as AWF's code and docs intend",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.ExitCode != 0 || got.Final != "done" || got.Steps["first"].Status != "completed" || got.Steps["second"].Status != "completed" {
				t.Errorf("reel: %+v", got)
			}
			if awf.ExitCode != 1 || awf.Steps["first"].Status != "failed" {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
		},
	},
	"expr-context-namespace": {
		why: "{{context.WorkingDir}} fails in AWF (its dot-less context has lowercase keys) although AWF's own validate asks for WorkingDir; reel resolves it",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.ExitCode != 0 || got.Final != "done" || got.Steps["step2"].Output != "Working directory - $PROJECT\n" {
				t.Errorf("reel should run every state: %+v", got)
			}
		},
	},
}

// withoutExitCodes is o with the exit codes of the named states zeroed.
func withoutExitCodes(o awfOutcome, names ...string) awfOutcome {
	o.Steps = maps.Clone(o.Steps)
	for _, n := range names {
		s := o.Steps[n]
		s.ExitCode = 0
		o.Steps[n] = s
	}
	return o
}

// inputExit1: an input that fails its validation exits 1 (a user error),
// as AWF's documentation says; AWF itself exits 3.
var inputExit1 = awfDifference{
	why: "an invalid input value exits 1 (user error) as AWF documents; AWF exits 3",
	check: func(t *testing.T, got, awf awfOutcome) {
		if got.ExitCode != 1 || len(got.Steps) != 0 || awf.ExitCode != 3 || len(awf.Steps) != 0 {
			t.Errorf("reel exit %d with %d states (want 1 before any state); AWF exit %d", got.ExitCode, len(got.Steps), awf.ExitCode)
		}
	},
}

// awfConfigInputs: inputs come from .awf/config.yaml, --input overriding,
// as in AWF; AWF also masks the value of an input whose name looks secret
// (api_key) in the step's output, which reel does only with
// --mask-secrets, by value (docs/decisions.md §9).
func awfConfigInputs(model string) awfDifference {
	return awfDifference{
		why: "AWF masks secret-named inputs in step output; reel does not by default",
		check: func(t *testing.T, got, awf awfOutcome) {
			want := "api_key=from-config model=" + model + "\n"
			if got.ExitCode != 0 || got.Final != awf.Final || got.Steps["echo_inputs"].Output != want {
				t.Errorf("reel: exit %d at %s, output %q; want %q", got.ExitCode, got.Final, got.Steps["echo_inputs"].Output, want)
			}
			if awf.Steps["echo_inputs"].Output != "api_key=*** model="+model+"\n" {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
		},
	}
}

// awfOutcome is what a run of either tool left.
type awfOutcome struct {
	Case     string             `json:"case"`
	Args     []string           `json:"args"`
	ExitCode int                `json:"exit_code"`
	Status   string             `json:"status"`
	Final    string             `json:"final"`
	Steps    map[string]awfStep `json:"steps"`
	// Files holds the content of the case's collected files.
	Files map[string]string `json:"files,omitempty"`
	// Out is what the tool printed (reel's runs only).
	Out string `json:"-"`
}

type awfStep struct {
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
	Stderr   string `json:"stderr,omitempty"`
	// Captured is reel's capture result (AWF keeps none: it parses
	// capture and does nothing with it); compareOutcomes checks it
	// against AWF's stdout and stderr.
	Captured map[string]string `json:"-"`
	// Truncated: reel's transcript keeps the start of the output
	// (Engine.OutputLimit); compareOutcomes compares that start.
	Truncated bool `json:"-"`
}

func TestAWFDifferential(t *testing.T) {
	fixtures, verdicts := awfCorpus(t)
	seen := map[string]bool{}
	for _, c := range awfCases {
		if c.own {
			continue
		}
		seen[c.fixture()] = true
		if verdicts[c.fixture()] != "valid" {
			t.Errorf("case %s: fixture %q is not one AWF accepts", c.name, c.fixture())
		}
	}
	for name, v := range verdicts {
		if v == "valid" && !seen[name] && awfOutOfScope[name] == "" {
			t.Errorf("fixture %s runs under AWF but has no case and no reason to be out", name)
		}
	}
	if *awfRecord && *awfBin == "" {
		t.Fatal("-record needs -awf PATH")
	}
	for _, c := range awfCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			golden := filepath.Join("testdata", "awf", c.name+".json")
			if *awfRecord {
				got := runAWFCase(t, fixtures, c, *awfBin)
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if why, ok := pendingOtherBranch[c.fixture()]; ok {
				t.Skipf("pending: %s", why)
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (record AWF's outcomes with scripts/awf-record.sh)", err)
			}
			var awf awfOutcome
			if err := json.Unmarshal(b, &awf); err != nil {
				t.Fatal(err)
			}
			got := runReelCase(t, fixtures, c)
			if c.agents {
				agentDifferences(t, &got, &awf)
			}
			d, ok := awfDeliberate[c.name]
			if !ok {
				d, ok = agentDeliberate[c.name]
			}
			if ok {
				t.Logf("deliberate difference: %s", d.why)
				d.check(t, got, awf)
				return
			}
			compareOutcomes(t, got, awf, captures(t, fixtures, c))
		})
	}
}

// compareOutcomes fails the test where reel's outcome differs from AWF's.
// A state AWF has no record of is allowed in reel's only when it is the
// one the run failed in: AWF does not record a state whose command could
// not be rendered. A state with a capture must hold, under its variable
// names, AWF's stdout and stderr of the state cut at max_size.
func compareOutcomes(t *testing.T, got, awf awfOutcome, capture map[string]*workflow.Capture) {
	t.Helper()
	if got.ExitCode != awf.ExitCode || got.Status != awf.Status || got.Final != awf.Final {
		t.Errorf("run: reel exit %d, %s at %q; AWF exit %d, %s at %q", got.ExitCode, got.Status, got.Final, awf.ExitCode, awf.Status, awf.Final)
	}
	for name, want := range awf.Files {
		if got.Files[name] != want {
			t.Errorf("file %s after the run:\nreel %q\nAWF  %q", name, got.Files[name], want)
		}
	}
	names := map[string]bool{}
	for n := range got.Steps {
		names[n] = true
	}
	for n := range awf.Steps {
		names[n] = true
	}
	for _, n := range sortedKeys(names) {
		g, gok := got.Steps[n]
		a, aok := awf.Steps[n]
		switch {
		case !aok && n == got.Final && g.Status == "failed":
		case !aok:
			t.Errorf("state %s ran under reel (%+v) but not under AWF", n, g)
		case !gok:
			t.Errorf("state %s ran under AWF (%+v) but not under reel", n, a)
		case g.Status != a.Status || g.ExitCode != a.ExitCode || !sameOutput(g.Output, a.Output, g.Truncated) || !sameOutput(g.Stderr, a.Stderr, g.Truncated):
			t.Errorf("state %s:\nreel %+v\nAWF  %+v", n, g, a)
		}
		if c := capture[n]; c != nil && gok && aok {
			want := map[string]string{}
			cut := func(s string) string {
				if c.MaxSize > 0 && int64(len(s)) > c.MaxSize {
					return s[:c.MaxSize]
				}
				return s
			}
			if c.Stdout != "" {
				want[c.Stdout] = cut(a.Output)
			}
			if c.Stderr != "" {
				want[c.Stderr] = cut(a.Stderr)
			}
			if fmt.Sprint(g.Captured) != fmt.Sprint(want) {
				t.Errorf("state %s captured %q, want %q (AWF's stdout and stderr)", n, g.Captured, want)
			}
		}
	}
	if len(capture) > 0 && !*awfRecord {
		checked := 0
		for n := range capture {
			if _, ok := awf.Steps[n]; ok {
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("no state with a capture ran")
		}
	}
}

// sameOutput reports whether reel's recorded output matches AWF's: equal,
// or when reel's transcript cut it (truncated), the start of AWF's.
func sameOutput(reel, awf string, truncated bool) bool {
	if truncated && len(reel) < len(awf) {
		return strings.HasPrefix(awf, reel)
	}
	return reel == awf
}

// captures returns the case's states that capture, as reel loads them.
func captures(t *testing.T, fixtures string, c awfCase) map[string]*workflow.Capture {
	t.Helper()
	path := filepath.Join(fixtures, "workflows", c.fixture()+".yaml")
	if c.own {
		path = filepath.Join("testdata", "awfown", c.fixture()+".yaml")
	}
	wf, err := workflow.Load(path, workflow.Options{})
	if err != nil {
		// a fixture that needs its project (templates, scripts) to load:
		// none of those capture
		return nil
	}
	out := map[string]*workflow.Capture{}
	for name, st := range wf.States {
		if st.Capture != nil {
			out[name] = st.Capture
		}
	}
	return out
}

// caseEnv is a case's project, home and environment, the same for both
// tools.
type caseEnv struct {
	proj, home, storage string
	env                 []string
	args                []string
	server              string
	stdin               string
}

func setupCase(t *testing.T, fixtures string, c awfCase) caseEnv {
	t.Helper()
	root := t.TempDir()
	ce := caseEnv{home: filepath.Join(root, "home"), storage: filepath.Join(root, "storage")}
	ce.proj = newAWFProjectAt(t, fixtures, filepath.Join(root, "project"))
	if c.own {
		// all of them, so that a call_workflow finds its child
		copyTree(t, filepath.Join("testdata", "awfown"), filepath.Join(ce.proj, ".awf", "workflows"))
	}
	for name, content := range c.files {
		p := filepath.Join(ce.proj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(ce.home, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range c.home {
		p := filepath.Join(ce.home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ce.env = append(os.Environ(),
		"HOME="+ce.home, "USER=awf-user",
		"XDG_CONFIG_HOME="+filepath.Join(ce.home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(ce.home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(ce.home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(ce.home, ".local", "state"),
		"REEL_STORAGE=", "AWF_CONFIG_PATH=", "NO_COLOR=1",
		// Both tools run commands with $SHELL -c, else /bin/sh; AWF's
		// outcomes were recorded under bash, and a shell's messages
		// ("command not found") are part of what is compared.
		"SHELL=/bin/bash",
	)
	if c.agents {
		fakes, err := filepath.Abs(filepath.Join("testdata", "awfagents"))
		if err != nil {
			t.Fatal(err)
		}
		ce.env = append(ce.env, "PATH="+fakes+string(filepath.ListSeparator)+os.Getenv("PATH"), "FAKE_AGENT_DIR="+ce.proj,
			"REEL_CLAUDE_BIN=", "REEL_GEMINI_BIN=", "REEL_CODEX_BIN=")
	}
	if c.anthropic {
		srv := httptest.NewServer(http.HandlerFunc(chatHandler))
		t.Cleanup(srv.Close)
		ce.env = append(ce.env, "ANTHROPIC_BASE_URL="+srv.URL+"/v1", "ANTHROPIC_API_KEY=sk-ant-test")
	}
	if len(c.install) > 0 {
		// GITHUB_TOKEN keeps AWF from asking gh for one
		ce.env = append(ce.env, "GITHUB_API_URL="+packServer(t).URL, "GITHUB_TOKEN=test-token", "GH_TOKEN=")
	}
	ce.env = append(ce.env, c.env...)
	ce.stdin = c.stdin
	for _, in := range c.inputs {
		ce.args = append(ce.args, "--input", in)
	}
	if c.server {
		srv := httptest.NewServer(http.HandlerFunc(echoHandler))
		t.Cleanup(srv.Close)
		ce.server = srv.URL
		ce.args = append(ce.args, "--input", "url="+srv.URL+"/items/7")
	}
	return ce
}

// newAWFProjectAt is newAWFProject in a given directory.
func newAWFProjectAt(t testing.TB, fixtures, proj string) string {
	t.Helper()
	copyTree(t, filepath.Join(fixtures, "workflows"), filepath.Join(proj, ".awf", "workflows"))
	copyTree(t, filepath.Join(fixtures, "scripts"), filepath.Join(proj, ".awf", "workflows", "scripts"))
	copyTree(t, filepath.Join(fixtures, "templates"), filepath.Join(proj, ".awf", "templates"))
	copyTree(t, filepath.Join(fixtures, "prompts"), filepath.Join(proj, ".awf", "prompts"))
	return proj
}

// echoHandler answers the http fixtures with a fixed JSON document naming
// the method and the body it received, with the status ?status= asks for
// (200 otherwise).
func echoHandler(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
	if code, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil {
		w.WriteHeader(code)
	}
	fmt.Fprintf(w, `{"method":%q,"path":%q,"body":%q}`, r.Method, r.URL.Path, body)
}

// chatHandler answers a chat completions request with one streamed reply
// and its usage, in OpenAI's SSE framing.
func chatHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"no route"}}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	const chunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763780000,"model":"claude-haiku-4-5",`
	for _, ev := range []string{
		chunk + `"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello!"},"finish_reason":null}]}`,
		chunk + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		chunk + `"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`,
		"[DONE]",
	} {
		fmt.Fprintf(w, "data: %s\n\n", ev)
	}
}

// runTool runs a binary in the case's project and returns its exit status.
func runTool(t *testing.T, ce caseEnv, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = ce.proj
	cmd.Env = ce.env
	if ce.stdin != "" {
		cmd.Stdin = strings.NewReader(ce.stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return code, out.String()
}

// installPacks runs the case's workflow install commands with bin.
func installPacks(t *testing.T, ce caseEnv, c awfCase, bin string) {
	t.Helper()
	for _, in := range c.install {
		if code, out := runTool(t, ce, bin, append([]string{"workflow", "install"}, in...)...); code != 0 {
			t.Fatalf("%s workflow install %v: exit %d\n%s", filepath.Base(bin), in, code, out)
		}
	}
}

func runAWFCase(t *testing.T, fixtures string, c awfCase, bin string) awfOutcome {
	ce := setupCase(t, fixtures, c)
	installPacks(t, ce, c, bin)
	args := append([]string{"run", c.target(), "--no-color", "--storage", ce.storage}, ce.args...)
	code, out := runTool(t, ce, bin, args...)
	got := awfOutcome{Case: c.name, Args: c.inputs, ExitCode: code, Status: "failed", Steps: map[string]awfStep{}}
	files, _ := filepath.Glob(filepath.Join(ce.storage, "states", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			ParentRunID string
			Status      string
			CurrentStep string
			States      map[string]struct {
				Status   string
				ExitCode int
				Output   string
				Stderr   string
			}
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if st.ParentRunID != "" {
			continue
		}
		got.Status, got.Final = st.Status, st.CurrentStep
		for name, s := range st.States {
			out := awfNormalize(s.Output, ce)
			if status, body, ok := awfHTTPOutput(out); ok {
				out = httpOutput(status, body)
			}
			got.Steps[name] = awfStep{Status: s.Status, ExitCode: s.ExitCode, Output: out, Stderr: awfNormalize(s.Stderr, ce)}
		}
	}
	if len(files) == 0 {
		t.Logf("AWF left no state (exit %d):\n%s", code, out)
	}
	got.Files = collectFiles(t, c, ce)
	return got
}

// collectFiles reads the case's collected files, normalized.
func collectFiles(t *testing.T, c awfCase, ce caseEnv) map[string]string {
	names := c.collect
	if c.agents {
		names = append(slices.Clip(names), agentLogs...)
	}
	if len(names) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(ce.proj, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out[name] = awfNormalize(string(b), ce)
	}
	return out
}

// agentLogs are the files the fake agents write in the project: what each
// CLI was asked (the session it resumes, the model, the system prompt and
// the prompt), one call after another. Their raw argv, which differs
// between the tools, is left out (docs/awf-compat.md).
var agentLogs = []string{"agents-claude.log", "agents-gemini.log", "agents-codex.log"}

// runReelCase runs the case under reel and reads its outcome back from the
// run's transcript, which must pass reel verify.
func runReelCase(t *testing.T, fixtures string, c awfCase) awfOutcome {
	ce := setupCase(t, fixtures, c)
	installPacks(t, ce, c, reelBinary(t))
	args := append([]string{"run", c.target(), "--storage", ce.storage}, ce.args...)
	code, out := runTool(t, ce, reelBinary(t), args...)
	got := awfOutcome{Case: c.name, Args: c.inputs, ExitCode: code, Status: "failed", Steps: map[string]awfStep{}, Out: out}
	got.Files = collectFiles(t, c, ce)
	m := regexp.MustCompile(`(?m)^run ([0-9a-f-]{36})$`).FindStringSubmatch(out)
	if m == nil {
		// the run did not start (bad inputs, an unset variable)
		return got
	}
	verifyStorage(t, ce.storage)
	events, err := transcript.ReadFile(filepath.Join(ce.storage, "transcripts", m[1]+".jsonl"))
	if err != nil {
		t.Fatalf("read transcript: %v", err)
	}
	for i := range events {
		ev := &events[i]
		p := ev.Step()
		if p == nil || hookSpan[p.Name] {
			// hooks are recorded as command steps (docs/decisions.md §11); AWF
			// keeps no state for them (their effects are in collect)
			continue
		}
		switch ev.Type {
		case transcript.StepStarted:
			if !strings.Contains(ev.Path, ".") {
				got.Final = p.Name
			}
		case transcript.StepCompleted:
			if p.Kind == transcript.KindTerminal {
				continue
			}
			got.Steps[p.Name] = reelStep(t, p, ce)
		case transcript.RunCompleted:
			var rr transcript.RunResult
			if err := transcript.DecodeResult(p.Result, &rr); err != nil {
				t.Fatal(err)
			}
			got.Status = map[string]string{"success": "completed", "failure": "failed", "cancelled": "cancelled"}[rr.Status]
		}
	}
	return got
}

// hookSpan names the steps a run records for its hooks.
var hookSpan = map[string]bool{
	workflow.HookPre: true, workflow.HookPost: true, workflow.HookWorkflowStart: true,
	workflow.HookWorkflowEnd: true, workflow.HookWorkflowError: true, workflow.HookWorkflowCancel: true,
}

// reelStep is a step.completed as AWF records a state: its status, its
// exit code (a command's; 0 for other kinds) and its output (a command's
// stdout; a loop's "completed N iterations"). Parallel blocks and calls
// have no output to compare: AWF records none for a block, and a fixed
// sentence for a call (docs/awf-compat.md).
func reelStep(t *testing.T, p *transcript.StepPayload, ce caseEnv) awfStep {
	s := awfStep{Status: "completed"}
	if p.Error != "" {
		s.Status = "failed"
	}
	switch p.Kind {
	case transcript.KindCommand:
		var cr transcript.CommandResult
		if err := transcript.DecodeResult(p.Result, &cr); err == nil {
			s.ExitCode, s.Output, s.Stderr = cr.ExitCode, awfNormalize(cr.Output, ce), awfNormalize(cr.Stderr, ce)
			s.Captured, s.Truncated = cr.Captured, cr.Truncated
		}
	case transcript.KindOperation:
		var hr struct {
			StatusCode int    `json:"status_code"`
			Body       string `json:"body"`
		}
		if err := transcript.DecodeResult(p.Result, &hr); err == nil && hr.StatusCode != 0 {
			s.Output = httpOutput(hr.StatusCode, awfNormalize(hr.Body, ce))
		}
	case transcript.KindAgent:
		var ar transcript.AgentResult
		if err := transcript.DecodeResult(p.Result, &ar); err == nil {
			s.Output = awfNormalize(ar.Output, ce)
		}
	case transcript.KindForEach, transcript.KindWhile:
		var lr struct{ Iterations int }
		if err := transcript.DecodeResult(p.Result, &lr); err == nil && s.Status == "completed" {
			s.Output = fmt.Sprintf("completed %d iterations", lr.Iterations)
		}
	}
	return s
}

// httpOutput is the comparable part of an http.request result.
func httpOutput(status int, body string) string {
	return fmt.Sprintf("status_code=%d\nbody=%s", status, body)
}

// awfHTTPOutput reads AWF's output of an http.request state: its result
// map as key=value lines in Go's random map order, headers included.
func awfHTTPOutput(out string) (status int, body string, ok bool) {
	var haveStatus, haveBody bool
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "status_code="):
			_, err := fmt.Sscanf(line, "status_code=%d", &status)
			haveStatus = err == nil
		case strings.HasPrefix(line, "body="):
			body, haveBody = strings.TrimPrefix(line, "body="), true
		}
	}
	return status, body, haveStatus && haveBody
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// awfNormalize replaces what differs from run to run (the project and home
// directories, the HTTP server's address, run ids).
func awfNormalize(s string, ce caseEnv) string {
	s = strings.ReplaceAll(s, ce.proj, "$PROJECT")
	s = strings.ReplaceAll(s, ce.home, "$HOME")
	if ce.server != "" {
		s = strings.ReplaceAll(s, ce.server, "$SERVER")
	}
	return uuidRE.ReplaceAllString(s, "$$UUID")
}
