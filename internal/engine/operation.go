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

// resolveValue renders every template leaf of v.
func resolveValue(v any, data map[string]any) (any, error) {
	switch v := v.(type) {
	case *workflow.Template:
		return v.Execute(data)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			y, err := resolveValue(x, data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = y
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			y, err := resolveValue(x, data)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	}
	return v, nil
}

// httpResult is the result of http.request, as the spec names it.
type httpResult struct {
	StatusCode    int               `json:"status_code"`
	Body          string            `json:"body"`
	Headers       map[string]string `json:"headers"`
	BodyTruncated bool              `json:"body_truncated"`
	Captured      map[string]string `json:"captured,omitempty"`
}

func (r *run) execOperation(ctx context.Context, sc scope, st *workflow.State) outcome {
	return r.attempts(ctx, st, func(attempt int) outcome {
		sp := r.startStep(ctx, sc, st, transcript.KindOperation, "", attempt)
		octx := ctx
		if st.Timeout > 0 {
			var cancel context.CancelFunc
			octx, cancel = context.WithTimeout(ctx, st.Timeout)
			defer cancel()
		}
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
			o = timedOut(ctx, octx, o, st.Timeout)
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
			o = timedOut(ctx, octx, o, st.Timeout)
			r.setState(st.Name, opValue(o, res))
			if res == nil {
				sp.finish(ctx, o, nil)
			} else {
				sp.finish(ctx, o, res)
			}
			return o
		}
		res, o := r.httpRequest(octx, in.(map[string]any))
		o = timedOut(ctx, octx, o, st.Timeout)
		r.setState(st.Name, operationValue(o, res))
		if res != nil {
			sp.finish(ctx, o, res)
			return o
		}
		sp.finish(ctx, o, nil)
		return o
	})
}

// timedOut turns the failure of an operation whose own timeout expired
// into a timeout (exit status 124).
func timedOut(ctx, octx context.Context, o outcome, timeout time.Duration) outcome {
	if o.ok || ctx.Err() != nil || octx.Err() == nil {
		return o
	}
	t := fail("timed out after %s", timeout)
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
	limit := r.e.outputLimit()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, fail("http.request %s %s: read body: %v", method, u.Redacted(), err)
	}
	res := &httpResult{StatusCode: resp.StatusCode, Headers: map[string]string{}}
	if len(b) > limit {
		b, res.BodyTruncated = b[:limit], true
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
	o := outcome{ok: true, exitCode: 0}
	if resp.StatusCode >= 400 {
		o = fail("http.request %s %s: status %d", method, u.Redacted(), resp.StatusCode)
		o.final = !retryableStatus(in["retryable_status_codes"], resp.StatusCode)
	}
	return res, o
}

// retryableStatus reports whether code is listed (an empty list retries
// every failure status).
func retryableStatus(list any, code int) bool {
	l, ok := list.([]any)
	if !ok || len(l) == 0 {
		return true
	}
	for _, x := range l {
		if fmt.Sprint(x) == strconv.Itoa(code) {
			return true
		}
	}
	return false
}
