package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// resolveValue renders every template leaf of v (an operation's inputs).
func resolveValue(v any, data map[string]any) (any, error) {
	return mapLeaves(v, func(leaf any) (any, error) {
		if t, ok := leaf.(*workflow.Template); ok {
			return t.Execute(data)
		}
		return leaf, nil
	})
}

// mapLeaves returns a copy of v, a value of maps and lists, with each leaf
// replaced by what leaf makes of it; an error names the keys it is under.
func mapLeaves(v any, leaf func(any) (any, error)) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			y, err := mapLeaves(x, leaf)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = y
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			y, err := mapLeaves(x, leaf)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	}
	return leaf(v)
}

// httpResult is the result of http.request, as the spec names it.
type httpResult struct {
	StatusCode int               `json:"status_code"`
	Body       string            `json:"body"`
	Headers    map[string]string `json:"headers"`
	// BodyTruncated says the response was longer than maxHTTPBody (AWF's
	// limit): Body, and what templates read, is its beginning.
	BodyTruncated bool `json:"body_truncated"`
	// Truncated says the transcript keeps less of the body than templates
	// read (Engine.OutputLimit, as for a command's output).
	Truncated bool              `json:"truncated,omitempty"`
	Captured  map[string]string `json:"captured,omitempty"`
}

// maxHTTPBody is how much of a response http.request reads, as AWF (1 MiB).
const maxHTTPBody = 1 << 20

// recorded is res as the transcript keeps it: the body cut at limit.
func (res *httpResult) recorded(limit int) *httpResult {
	if len(res.Body) <= limit {
		return res
	}
	c := *res
	c.Body = capText(c.Body, limit, &c.Truncated)
	return &c
}

func (r *run) execOperation(ctx context.Context, sc scope, st *workflow.State) outcome {
	return r.attempts(ctx, st, func(t *try) outcome {
		sp := r.startStep(ctx, sc, st, transcript.KindOperation, "", t)
		octx, cancel := t.limit.context(ctx)
		defer cancel()
		in, err := resolveValue(st.Inputs, r.data(sc))
		if err != nil {
			o := fail("inputs: %v", err)
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, nil)
			return o
		}
		if in == nil {
			in = map[string]any{}
		}
		if _, builtin := workflow.Operations[st.Operation]; !builtin && r.e.PluginHost.ProvidesOperation(st.Operation) {
			res, o := r.pluginOperation(octx, sp.path, st.Operation, in.(map[string]any))
			o = timedOut(ctx, octx, o, t.limit)
			r.setState(st.Name, pluginOpValue(o, res))
			if res == nil {
				sp.finish(ctx, o, nil)
			} else {
				sp.finish(ctx, o, res)
			}
			return o
		}
		if st.Operation != "http.request" {
			res, o := r.operate(octx, sp.path, st.Operation, in.(map[string]any))
			o = timedOut(ctx, octx, o, t.limit)
			r.setState(st.Name, opValue(o, res))
			if res == nil {
				sp.finish(ctx, o, nil)
			} else {
				sp.finish(ctx, o, res)
			}
			return o
		}
		res, o := r.httpRequest(octx, in.(map[string]any))
		o = timedOut(ctx, octx, o, t.limit)
		r.setState(st.Name, operationValue(o, res))
		if res != nil {
			sp.finish(ctx, o, res.recorded(r.e.outputLimit()))
			return o
		}
		sp.finish(ctx, o, nil)
		return o
	})
}

// timedOut turns the failure of an operation whose own timeout expired
// into a timeout (exit status 124).
func timedOut(ctx, octx context.Context, o outcome, limit deadline) outcome {
	if o.ok || ctx.Err() != nil || octx.Err() == nil {
		return o
	}
	t := fail("timed out after %s", limit)
	t.exitCode = exitTimeout
	return t
}

// opValue is the template view of a built-in operation's result (res is
// nil when it never answered).
func opValue(o outcome, res *opResult) map[string]any {
	v := stateValue(o, "", "")
	if res != nil {
		v["Output"], v["Response"], v["Data"], v["JSON"] = res.Output, res.Outputs, res.Outputs, res.Outputs
	}
	return v
}

// operationValue is the template view of an operation's result (res is
// nil when the request was never answered).
func operationValue(o outcome, res *httpResult) map[string]any {
	v := stateValue(o, "", "")
	if res == nil {
		return v
	}
	resp := map[string]any{"status_code": res.StatusCode, "body": res.Body, "headers": res.Headers, "body_truncated": res.BodyTruncated}
	if js := parseJSON(res.Body); js != nil {
		v["JSON"] = js
		resp["json"] = js
	}
	v["Output"] = res.Body
	v["Response"] = resp
	v["Data"] = resp
	return v
}

func (r *run) httpRequest(ctx context.Context, in map[string]any) (*httpResult, outcome) {
	raw := fmt.Sprint(in["url"])
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fail("http.request: url %q must be an absolute http or https URL", raw)
	}
	method := "GET"
	if m, ok := in["method"]; ok {
		method = strings.ToUpper(fmt.Sprint(m))
	}
	switch method {
	case "GET", "POST", "PUT", "DELETE":
	default:
		return nil, fail("http.request: method %q is not GET, POST, PUT or DELETE", method)
	}
	timeout := 30 * time.Second
	if t, ok := in["timeout"]; ok {
		secs, err := strconv.ParseFloat(fmt.Sprint(t), 64)
		if err != nil || secs <= 0 {
			return nil, fail("http.request: timeout %v is not a positive number of seconds", t)
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	var body io.Reader
	if b, ok := in["body"]; ok && b != nil {
		body = strings.NewReader(fmt.Sprint(b))
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, u.String(), body)
	if err != nil {
		return nil, fail("http.request: %v", err)
	}
	if h, ok := in["headers"].(map[string]any); ok {
		for k, v := range h {
			req.Header.Set(k, fmt.Sprint(v))
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, cancelledOutcome(ctx)
		}
		return nil, fail("http.request %s %s: %v", method, u.Redacted(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		return nil, fail("http.request %s %s: read body: %v", method, u.Redacted(), err)
	}
	res := &httpResult{StatusCode: resp.StatusCode, Headers: map[string]string{}}
	if len(b) > maxHTTPBody {
		b, res.BodyTruncated = b[:maxHTTPBody], true
	}
	res.Body = string(b)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		res.Headers[k] = strings.Join(resp.Header[k], ", ")
	}
	// As in AWF, any status is an answer (templates read
	// .Response.status_code); only one listed in retryable_status_codes
	// fails the state, so that its retry tries again.
	if retryableStatus(in["retryable_status_codes"], resp.StatusCode) {
		return res, fail("http.request %s %s: retryable status code %d", method, u.Redacted(), resp.StatusCode)
	}
	return res, outcome{ok: true}
}

// retryableStatus reports whether code is in list.
func retryableStatus(list any, code int) bool {
	l, _ := list.([]any)
	for _, x := range l {
		if fmt.Sprint(x) == strconv.Itoa(code) {
			return true
		}
	}
	return false
}
