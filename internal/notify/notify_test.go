package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestFromInputs(t *testing.T) {
	n, err := FromInputs(map[string]any{"message": " done ", "backend": "webhook", "webhook_url": "https://example.com/h"}, "")
	if err != nil || n.Title != DefaultTitle || n.Priority != "default" || n.Message != "done" {
		t.Fatalf("%+v %v", n, err)
	}
	n, err = FromInputs(map[string]any{"message": "m"}, "desktop")
	if err != nil || n.Backend != Desktop {
		t.Fatalf("default backend: %+v %v", n, err)
	}
	for _, c := range []struct {
		in   map[string]any
		def  string
		want string
	}{
		{map[string]any{"message": "m"}, "", "no backend given, and notify.default_backend is not set"},
		{map[string]any{"message": "m", "backend": "slack"}, "", `backend "slack" is not available (available: desktop, webhook)`},
		{map[string]any{"backend": "desktop"}, "", `input "message" is required`},
		{map[string]any{"message": "m", "priority": "urgent"}, "desktop", `priority "urgent" is not low, default or high`},
		{map[string]any{"message": "m", "backend": "webhook"}, "", "the webhook backend needs webhook_url"},
		{map[string]any{"message": "m", "backend": "webhook", "webhook_url": "ftp://x"}, "", `webhook_url "ftp://x" must be an absolute http or https URL`},
		{map[string]any{"message": 3}, "desktop", `input "message" must be text`},
	} {
		if _, err := FromInputs(c.in, c.def); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %s", c.in, err, c.want)
		}
	}
}

func TestWebhook(t *testing.T) {
	var got map[string]string
	status := http.StatusAccepted
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %v", r.Method, r.Header)
		}
		b, _ := io.ReadAll(r.Body)
		got = nil
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("body %s: %v", b, err)
		}
		w.WriteHeader(status)
		io.WriteString(w, "queued")
	}))
	defer srv.Close()
	s := &Sender{}
	res, err := s.Send(context.Background(), Notification{Backend: Webhook, Title: "Build", Message: "ok", Priority: "high", WebhookURL: srv.URL + "/hook"})
	if err != nil || res != (Result{Backend: Webhook, Status: 202, Response: "queued"}) {
		t.Fatalf("%+v %v", res, err)
	}
	// AWF's payload: title, message, priority (its docs promise more)
	if len(got) != 3 || got["title"] != "Build" || got["message"] != "ok" || got["priority"] != "high" {
		t.Fatalf("payload %v", got)
	}
	if o := res.Outputs(); o["status"] != 202 || o["backend"] != "webhook" || o["response"] != "queued" {
		t.Fatalf("outputs %v", o)
	}
	status = http.StatusBadGateway
	res, err = s.Send(context.Background(), Notification{Backend: Webhook, Message: "ok", WebhookURL: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "answered 502 Bad Gateway") || res.Status != 502 {
		t.Fatalf("502: %+v %v", res, err)
	}
}

func TestDesktop(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake notify-send is for Linux")
	}
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "notify-send")
	os.WriteFile(fake, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+args+"\n"), 0o755)
	s := &Sender{Environ: []string{"PATH=" + dir}, LookPath: func(name string) (string, error) { return filepath.Join(dir, name), nil }}
	res, err := s.Send(context.Background(), Notification{Backend: Desktop, Title: "T i", Message: "m \"q\"", Priority: "high"})
	if err != nil || res.Status != 0 || res.Response != "notification sent via linux" {
		t.Fatalf("%+v %v", res, err)
	}
	b, _ := os.ReadFile(args)
	if string(b) != "-u\ncritical\nT i\nm \"q\"\n" {
		t.Fatalf("notify-send args %q", b)
	}
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'no display' >&2; exit 1\n"), 0o755)
	res, err = s.Send(context.Background(), Notification{Backend: Desktop, Message: "m", Priority: "low"})
	if err == nil || !strings.Contains(err.Error(), "no display") || res.Status != 1 {
		t.Fatalf("failing notify-send: %+v %v", res, err)
	}
	s.LookPath = nil
	s.Environ = []string{"PATH=" + t.TempDir()}
	t.Setenv("PATH", t.TempDir())
	if _, err := s.Send(context.Background(), Notification{Backend: Desktop, Message: "m", Priority: "low"}); err == nil || !strings.Contains(err.Error(), "notify-send") {
		t.Fatalf("no notify-send: %v", err)
	}
}
