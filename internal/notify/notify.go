// Package notify sends the notifications of the notify.send workflow
// operation (AWF's notification provider): to the desktop with
// notify-send (Linux) or osascript (macOS), or as a JSON POST to a webhook.
//
// It keeps AWF's contract: the title defaults to "AWF Workflow", the
// priority is low, default or high (notify-send urgency low, normal,
// critical), a webhook receives {"title","message","priority"} and any
// 2xx answer is a success. The outputs are backend, status (the HTTP
// status of a webhook, 0 for a desktop notification sent) and response.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Backends.
const (
	Desktop = "desktop"
	Webhook = "webhook"
)

// DefaultTitle is the title of a notification that names none.
const DefaultTitle = "AWF Workflow"

// Timeouts of one notification, as AWF's.
const (
	desktopTimeout = 5 * time.Second
	webhookTimeout = 10 * time.Second
)

// Notification is one notify.send.
type Notification struct {
	Backend    string
	Title      string
	Message    string
	Priority   string // low, default or high
	WebhookURL string
}

// Result is what a backend answered.
type Result struct {
	Backend  string `json:"backend"`
	Status   int    `json:"status"`
	Response string `json:"response"`
}

// Outputs are the operation's outputs.
func (r Result) Outputs() map[string]any {
	return map[string]any{"backend": r.Backend, "status": r.Status, "response": r.Response}
}

// Sender sends notifications.
type Sender struct {
	// Environ is the environment of notify-send or osascript.
	Environ []string
	// LookPath finds them (exec.LookPath if nil).
	LookPath func(name string) (string, error)
	// HTTP sends webhooks (http.DefaultClient if nil).
	HTTP *http.Client
}

// FromInputs builds a notification from the operation's resolved inputs;
// defaultBackend is used when they name none (the project config's
// notify.default_backend).
func FromInputs(in map[string]any, defaultBackend string) (Notification, error) {
	str := func(k string) (string, error) {
		switch v := in[k].(type) {
		case nil:
			return "", nil
		case string:
			return strings.TrimSpace(v), nil
		default:
			return "", fmt.Errorf("input %q must be text, got %v", k, v)
		}
	}
	var n Notification
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"backend", &n.Backend}, {"title", &n.Title}, {"message", &n.Message}, {"priority", &n.Priority}, {"webhook_url", &n.WebhookURL}} {
		if *f.dst, err = str(f.key); err != nil {
			return n, err
		}
	}
	if n.Backend == "" {
		n.Backend = defaultBackend
	}
	switch {
	case n.Backend == "":
		return n, errors.New("no backend given, and notify.default_backend is not set in .awf/config.yaml or .reel/config.yaml")
	case n.Backend != Desktop && n.Backend != Webhook:
		return n, fmt.Errorf("backend %q is not available (available: desktop, webhook)", n.Backend)
	case n.Message == "":
		return n, errors.New("input \"message\" is required")
	}
	if n.Title == "" {
		n.Title = DefaultTitle
	}
	if n.Priority == "" {
		n.Priority = "default"
	}
	if n.Priority != "low" && n.Priority != "default" && n.Priority != "high" {
		return n, fmt.Errorf("priority %q is not low, default or high", n.Priority)
	}
	if n.Backend == Webhook {
		if n.WebhookURL == "" {
			return n, errors.New("the webhook backend needs webhook_url")
		}
		u, err := url.Parse(n.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return n, fmt.Errorf("webhook_url %q must be an absolute http or https URL", n.WebhookURL)
		}
	}
	return n, nil
}

// Send delivers n through its backend.
func (s *Sender) Send(ctx context.Context, n Notification) (Result, error) {
	if n.Backend == Webhook {
		return s.webhook(ctx, n)
	}
	return s.desktop(ctx, n)
}

func (s *Sender) webhook(ctx context.Context, n Notification) (Result, error) {
	res := Result{Backend: Webhook}
	body, err := json.Marshal(map[string]string{"title": n.Title, "message": n.Message, "priority": n.Priority})
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return res, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "reel")
	hc := s.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	u, _ := url.Parse(n.WebhookURL)
	resp, err := hc.Do(req)
	if err != nil {
		return res, fmt.Errorf("webhook %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	res.Status, res.Response = resp.StatusCode, string(b)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return res, fmt.Errorf("webhook %s answered %d %s", u.Redacted(), resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return res, nil
}

func (s *Sender) desktop(ctx context.Context, n Notification) (Result, error) {
	res := Result{Backend: Desktop, Status: 1}
	var name string
	var args []string
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
		urgency := map[string]string{"low": "low", "default": "normal", "high": "critical"}[n.Priority]
		name, args = "notify-send", []string{"-u", urgency, n.Title, n.Message}
	case "darwin":
		esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
		name, args = "osascript", []string{"-e", fmt.Sprintf(`display notification "%s" with title "%s"`, esc.Replace(n.Message), esc.Replace(n.Title))}
	default:
		return res, fmt.Errorf("desktop notifications need Linux or macOS, not %s", runtime.GOOS)
	}
	look := s.LookPath
	if look == nil {
		look = exec.LookPath
	}
	path, err := look(name)
	if err != nil {
		return res, fmt.Errorf("desktop notification: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, desktopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = s.Environ
	out, err := cmd.CombinedOutput()
	res.Response = strings.TrimSpace(string(out))
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("desktop notification: %s did not finish within %s", name, desktopTimeout)
		}
		return res, fmt.Errorf("desktop notification: %s: %v: %s", name, err, res.Response)
	}
	res.Status = 0
	if res.Response == "" {
		res.Response = "notification sent via " + runtime.GOOS
	}
	return res, nil
}
