package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/github"
	"github.com/reelhq/reel/internal/notify"
	"github.com/reelhq/reel/internal/workflow"
)

// opResult is the step result of the github.* and notify.send operations:
// their outputs, which templates read as .states.NAME.Response (and
// .Output, their JSON), and the API requests a GitHub operation made.
type opResult struct {
	Operation string            `json:"operation"`
	Outputs   map[string]any    `json:"outputs"`
	Requests  []github.Request  `json:"requests,omitempty"`
	Captured  map[string]string `json:"captured,omitempty"`
	// Output is the outputs as JSON, the step's .Output.
	Output string `json:"-"`
}

// operate runs a built-in operation other than http.request. An operation
// reel does not know ends the run without following on_failure, as in AWF
// (whose validate accepts any name outside its providers' namespaces, since
// a plugin may provide it, and whose run stops there).
func (r *run) operate(ctx context.Context, path, name string, in map[string]any) (*opResult, outcome) {
	res := &opResult{Operation: name}
	var outs map[string]any
	var err error
	_, builtin := workflow.Operations[name]
	switch {
	case builtin && strings.HasPrefix(name, "github."):
		c := github.New(r.e.environ(), r.e.workDir())
		c.LookPath = r.lookPath
		c.UseGHToken(ctx)
		outs, err = c.Run(ctx, name, in)
		res.Requests = c.Requests()
		show := r.newOutputWriter(path)
		for _, q := range res.Requests {
			if q.Error != "" {
				fmt.Fprintf(show, "%s %s: %s\n", q.Method, q.Path, q.Error)
			} else {
				fmt.Fprintf(show, "%s %s → %d\n", q.Method, q.Path, q.Status)
			}
		}
		show.flush()
	case builtin && name == "notify.send":
		var n notify.Notification
		n, err = notify.FromInputs(in, r.e.NotifyBackend)
		if err == nil {
			s := notify.Sender{Environ: r.e.environ(), LookPath: r.lookPath, HTTP: http.DefaultClient}
			var nr notify.Result
			nr, err = s.Send(ctx, n)
			outs = nr.Outputs()
		}
	default:
		names := slices.Sorted(maps.Keys(workflow.Operations))
		o := fail("operation %q not found (built-in: %s)", name, strings.Join(names, ", "))
		o.final = true
		// AWF exits 1 here (an operation "not found" reads as a user error)
		o.end = &ending{status: "failure", exitCode: exitcode.User, message: fmt.Sprintf("state %s: %s", path, o.err)}
		return nil, o
	}
	if outs == nil {
		outs = map[string]any{}
	}
	res.Outputs = outs
	b, jerr := json.Marshal(outs)
	if jerr != nil {
		return nil, fail("%s: outputs: %v", name, jerr)
	}
	res.Output = string(b)
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return res, cancelledOutcome(ctx)
	case err != nil:
		o := fail("%s: %v", name, err)
		o.final = !retryableOpError(err)
		return res, o
	}
	return res, outcome{ok: true}
}

// retryableOpError tells whether another attempt can help: not for a bad
// input or a GitHub answer other than a rate limit or a server error.
func retryableOpError(err error) bool {
	if errors.Is(err, github.ErrInput) {
		return false
	}
	var ae *github.APIError
	if errors.As(err, &ae) {
		return ae.Status == http.StatusTooManyRequests || ae.Status >= 500 || ae.Status == http.StatusForbidden && strings.Contains(strings.ToLower(ae.Message), "rate limit")
	}
	return true
}

// lookPath finds an executable on the PATH of the steps' environment.
func (r *run) lookPath(name string) (string, error) {
	for dir := range strings.SplitSeq(r.getenv("PATH"), string(filepath.ListSeparator)) {
		if dir == "" {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH", name)
}
