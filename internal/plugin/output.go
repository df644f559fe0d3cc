package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// lineLog writes whole lines to the host's log, one writer at a time.
type lineLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineLog) line(s string) {
	if l == nil || l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, s)
}

// tail keeps the last lines a plugin printed, to say why it failed.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const (
	tailLines   = 12
	tailLineMax = 400
)

func (t *tail) add(s string) {
	if len(s) > tailLineMax {
		s = s[:tailLineMax] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, s)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

// suffix is ": last output: …" or "".
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return "; its last output: " + strings.Join(t.lines, " | ")
}

// printed records a line the plugin printed and shows it.
func (p *proc) printed(s string) {
	s = strings.TrimRight(s, "\r")
	if strings.TrimSpace(s) == "" {
		return
	}
	p.tail.add(s)
	p.h.log.line("plugin " + p.in.Name + ": " + s)
}

// stderrLog receives the plugin process's stderr, a line per write (from
// go-plugin). JSON lines are the plugin's structured (hclog) log: those at
// info and above are shown as "message key=value"; other lines (a panic,
// anything written before the plugin served) are shown as they are.
type stderrLog struct{ p *proc }

func (w stderrLog) Write(b []byte) (int, error) {
	line := strings.TrimRight(string(b), "\n")
	if line == "" {
		return len(b), nil
	}
	if strings.HasPrefix(line, "{") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) == nil {
			if text, ok := hclogText(entry); ok {
				w.p.printed(text)
			}
			return len(b), nil
		}
	}
	w.p.printed(line)
	return len(b), nil
}

// hclogText formats an hclog JSON entry at info or above.
func hclogText(entry map[string]any) (string, bool) {
	switch entry["@level"] {
	case "info", "warn", "error":
	default:
		return "", false
	}
	msg, _ := entry["@message"].(string)
	var keys []string
	for k := range entry {
		if !strings.HasPrefix(k, "@") && k != "timestamp" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	if lvl := entry["@level"]; lvl != "info" {
		fmt.Fprintf(&b, "[%s] ", strings.ToUpper(fmt.Sprint(lvl)))
	}
	b.WriteString(msg)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, entry[k])
	}
	return b.String(), true
}

// stdioLog receives what the plugin wrote to its os.Stdout and os.Stderr
// once it served (go-plugin forwards both), split into lines.
type stdioLog struct {
	p   *proc
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *stdioLog) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			if w.buf.Len() > 64<<10 {
				w.p.printed(w.buf.String())
				w.buf.Reset()
			}
			return len(b), nil
		}
		w.p.printed(string(w.buf.Next(i + 1)[:i]))
	}
}

// exitWatcher is go-plugin's own log (JSON): it keeps how the plugin's
// process ended, for a crash report, and drops the rest.
type exitWatcher struct{ p *proc }

func (w exitWatcher) Write(b []byte) (int, error) {
	var entry struct {
		Message string `json:"@message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(b, &entry) == nil && entry.Message == "plugin process exited" {
		exit := "exited"
		if entry.Error != "" {
			exit = entry.Error
		}
		w.p.exit.Store(&exit)
	}
	return len(b), nil
}
