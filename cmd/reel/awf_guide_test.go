package main

import (
	"maps"
	"testing"
)

// awfGuideCases are workflows written from AWF's user guide as a user
// following it would write them (loops, parallel blocks, retry, timeouts,
// inputs, templates, hooks, sub-workflows, operations, large outputs),
// each run under AWF and reel by the differential test. They live in
// testdata/awfown/guide-*.yaml; their AWF outcomes in testdata/awf/.
var awfGuideCases = []awfCase{
	{name: "guide-hello", own: true},
	{name: "guide-greet-user", own: true, inputs: []string{"name=Alice", "greeting=Hi"}},
	{name: "guide-process-files", own: true},
	{name: "guide-conditional-deploy", own: true, inputs: []string{"env=prod"}},
	{name: "guide-conditional-deploy/dev", own: true, inputs: []string{"env=dev"}},
	{name: "guide-nested-loops", own: true},
	{name: "guide-parallel-build", own: true},
	{name: "guide-parallel-all-fail", own: true},
	{name: "guide-parallel-best-effort", own: true},
	{name: "guide-parallel-any", own: true},
	{name: "guide-while-poll", own: true},
	{name: "guide-while-counter", own: true},
	{name: "guide-foreach-dynamic", own: true},
	{name: "guide-foreach-input", own: true},
	{name: "guide-foreach-break", own: true},
	{name: "guide-max-iterations", own: true, collect: []string{"pages.log"}},
	{name: "guide-retry-flaky", own: true, collect: []string{"attempts"}},
	{name: "guide-retry-codes", own: true},
	{name: "guide-retry-exhausted", own: true},
	{name: "guide-timeout", own: true},
	{name: "guide-timeout-fails-run", own: true},
	{name: "guide-input-validation", own: true, inputs: []string{"email=ann@example.com", "replicas=4"}},
	{name: "guide-input-boolean", own: true, inputs: []string{"dry=true"}},
	{name: "guide-input-missing", own: true},
	{name: "guide-interpolation", own: true, env: []string{"DEPLOY_STAGE=canary"}},
	{name: "guide-template-functions", own: true},
	{name: "guide-output-chain", own: true},
	{name: "guide-exit-code-routing", own: true},
	{name: "guide-continue-on-error", own: true},
	{name: "guide-inline-error", own: true},
	{name: "guide-terminal-failure", own: true},
	{name: "guide-working-dir", own: true},
	{name: "guide-hooks-workflow", own: true, collect: []string{"hooks.log"}},
	{name: "guide-hooks-error", own: true, collect: []string{"hooks.log"}},
	{name: "guide-hooks-step", own: true, collect: []string{"hooks.log"}},
	{name: "guide-hooks-doc-form", own: true, collect: []string{"hooks.log"}},
	{name: "guide-call", own: true},
	{name: "guide-call-nested-form", own: true},
	{name: "guide-call-failure", own: true},
	{name: "guide-call-loop", own: true},
	{name: "guide-http-get", own: true, server: true},
	{name: "guide-http-post", own: true, server: true},
	{name: "guide-http-not-found", own: true, server: true},
	{name: "guide-http-delete", own: true, server: true},
	{name: "guide-large-lines", own: true},
	{name: "guide-large-json", own: true},
	{name: "guide-script-file", own: true, files: map[string]string{
		".awf/workflows/scripts/guide-deploy.sh": "#!/bin/sh\necho \"deploying to {{.inputs.env}}\"\n",
	}},
	{name: "guide-use-template", own: true, files: map[string]string{
		".awf/templates/guide-echo.yaml": "name: guide-echo\nparameters:\n  - name: message\n    required: true\nstates:\n  guide-echo:\n    type: step\n    command: echo \"{{parameters.message}}\"\n",
	}},
	{name: "guide-env-max", own: true, env: []string{"MAX_ITEMS=3"}, collect: []string{"seen.log"}},
}

// awfGuideDeliberate are the guide cases where reel differs from AWF on
// purpose (docs/awf-compat.md says why), each checked as reel does it.
var awfGuideDeliberate = map[string]awfDifference{
	"guide-timeout": {
		why: "a timed-out command's exit code is 124 in reel, -1 in AWF",
		check: func(t *testing.T, got, awf awfOutcome) {
			wantCodes(t, got, awf, "slow", 124, -1)
			compareOutcomes(t, withoutExitCodes(got, "slow"), withoutExitCodes(awf, "slow"), nil)
		},
	},
	"guide-timeout-fails-run": {
		why: "a run a step's timeout ends is failed in reel, cancelled in AWF (exit 3 in both); the step's exit code is 124 in reel, -1 in AWF",
		check: func(t *testing.T, got, awf awfOutcome) {
			wantCodes(t, got, awf, "hang", 124, -1)
			if got.ExitCode != 3 || got.Status != "failed" || awf.ExitCode != 3 || awf.Status != "cancelled" || got.Final != awf.Final {
				t.Errorf("reel exit %d %s at %s, AWF exit %d %s at %s", got.ExitCode, got.Status, got.Final, awf.ExitCode, awf.Status, awf.Final)
			}
		},
	},
	"guide-parallel-best-effort": {
		why: "AWF loses a failed parallel branch's exit code (0); reel keeps it",
		check: func(t *testing.T, got, awf awfOutcome) {
			wantCodes(t, got, awf, "two", 1, 0)
			compareOutcomes(t, withoutExitCodes(got, "two"), withoutExitCodes(awf, "two"), nil)
		},
	},
	"guide-parallel-all-fail": {
		why: "AWF loses a failed parallel branch's exit code and stderr; reel keeps them",
		check: func(t *testing.T, got, awf awfOutcome) {
			if g, a := got.Steps["broken"], awf.Steps["broken"]; g.ExitCode != 4 || g.Stderr != "broken check\n" || a.ExitCode != 0 || a.Stderr != "" || g.Status != a.Status {
				t.Errorf("broken: reel %+v, AWF %+v", g, a)
			}
			compareOutcomes(t, without(got, "broken"), without(awf, "broken"), nil)
		},
	},
	"guide-large-lines": {
		why: "a command that cannot start (here its 88 KB argument is past the kernel's limit for one, in both tools) exits 127 in reel, with the reason in its stderr; AWF records exit 0 for the failed state",
		check: func(t *testing.T, got, awf awfOutcome) {
			if g, a := got.Steps["count"], awf.Steps["count"]; g.ExitCode != 127 || g.Status != "failed" || a.ExitCode != 0 || a.Status != "failed" {
				t.Errorf("count: reel %+v, AWF %+v", g, a)
			}
			compareOutcomes(t, without(got, "count"), without(awf, "count"), nil)
		},
	},
	"guide-call-nested-form": {
		why: "the guide's call_workflow: mapping is refused by AWF (exit 2); reel takes it as the flat form",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.ExitCode != 0 || got.Steps["analyze_code"].Status != "completed" || awf.ExitCode != 2 || len(awf.Steps) != 0 {
				t.Errorf("reel %+v, AWF %+v", got, awf)
			}
		},
	},
	"guide-hooks-doc-form": {
		why: "the guide's pre_hook and post_hook are ignored by AWF; reel runs them",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.Files["hooks.log"] != "Before step\nAfter step\n" || awf.Files["hooks.log"] != "" {
				t.Errorf("hooks.log: reel %q, AWF %q", got.Files["hooks.log"], awf.Files["hooks.log"])
			}
			g, a := got, awf
			g.Files, a.Files = nil, nil
			compareOutcomes(t, g, a, nil)
		},
	},
	"guide-inline-error": {
		why: "an inline on_failure's status is the exit status in reel (3 here); AWF takes its exit status from the words of the message (\"invalid\" makes it 2)",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.ExitCode != 3 || awf.ExitCode != 2 || got.Status != "failed" || got.Steps["validate"].Stderr != awf.Steps["validate"].Stderr || got.Steps["validate"].ExitCode != 1 {
				t.Errorf("reel %+v, AWF %+v", got, awf)
			}
		},
	},
}

// wantCodes checks the exit codes reel and AWF gave state name.
func wantCodes(t *testing.T, got, awf awfOutcome, name string, reel, awfCode int) {
	t.Helper()
	if g, a := got.Steps[name], awf.Steps[name]; g.ExitCode != reel || a.ExitCode != awfCode || g.Status != a.Status {
		t.Errorf("%s: reel %+v (want exit %d), AWF %+v (want exit %d)", name, g, reel, a, awfCode)
	}
}

// without is o without the named states.
func without(o awfOutcome, names ...string) awfOutcome {
	o.Steps = maps.Clone(o.Steps)
	for _, n := range names {
		delete(o.Steps, n)
	}
	return o
}

func init() {
	awfCases = append(awfCases, awfGuideCases...)
	maps.Copy(awfDeliberate, awfGuideDeliberate)
}
