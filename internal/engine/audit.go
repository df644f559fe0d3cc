package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/safefile"
)

// auditLog appends the audit trail: one JSON line per run and step start
// and end. It is written whatever the transcript setting, whole lines only
// (safefile.Appender), and a write error stops the run like a transcript
// write error (onFail, the root run's recordFailed). Its entries come
// masked: they are made from the masked events (record.go).
type auditLog struct {
	mu     sync.Mutex
	f      *safefile.Appender
	err    error
	onFail func(error)
}

type auditEntry struct {
	Time        string `json:"time"`
	Event       string `json:"event"`
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Workflow    string `json:"workflow"`
	Path        string `json:"path,omitempty"`
	Iteration   int    `json:"iteration"`
	Attempt     int    `json:"attempt,omitempty"`
	Kind        string `json:"kind"`
	Status      string `json:"status,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
	ExitCode    *int   `json:"exit_code,omitempty"`
	Error       string `json:"error,omitempty"`
}

func openAudit(storage string) (*auditLog, error) {
	if storage == "" {
		storage = ".reel/storage"
	}
	p := filepath.Join(storage, "audit.jsonl")
	f, err := safefile.OpenAppender(p)
	if err != nil {
		return nil, fmt.Errorf("open audit trail: %w", err)
	}
	return &auditLog{f: f}, nil
}

func (a *auditLog) write(e auditEntry) {
	if a == nil {
		return
	}
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	a.mu.Lock()
	if a.err != nil {
		a.mu.Unlock()
		return
	}
	err = a.f.AppendLine(b)
	if err != nil {
		a.err = fmt.Errorf("audit trail: %w", err)
	}
	fail, ferr := a.onFail, a.err
	a.mu.Unlock()
	if err != nil && fail != nil {
		fail(ferr)
	}
}

func (a *auditLog) close() {
	if a != nil && a.f != nil {
		a.f.Close()
	}
}
