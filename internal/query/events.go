// Package query answers questions across transcripts: which events match a
// filter, what runs cost, which tools ran, how two runs differ.
//
// The scans are built to beat general JSON tools on large transcripts:
// each line is first looked at as raw bytes (its "type", "path" and
// "timestamp" sit at the start of every line reel writes), and only what a
// question needs is decoded.
package query

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawevent"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// Filter selects events. Zero fields select everything.
type Filter struct {
	// Types keeps events of any of these types.
	Types []transcript.EventType
	// PathGlob keeps events whose path matches: '*' stands for any run of
	// characters within one dot-separated segment, '?' for one character.
	PathGlob string
	// Fidelity keeps tool events of this fidelity and messages holding a
	// block of it.
	Fidelity transcript.Fidelity
	// Since and Until bound the timestamp: Since <= t < Until.
	Since, Until time.Time
}

// Projection says what to print of each matching event.
type Projection struct {
	// Fields are dotted paths into the event ("payload.name",
	// "payload.blocks.0.text"). None prints the whole line.
	Fields []string
	// JSON prints field values as JSON; otherwise strings are printed
	// unquoted as `jq -r` does. Several fields are tab-separated, or a
	// JSON array with JSON set.
	JSON bool
}

// Validate reports a filter that can never work.
func (f *Filter) Validate() error {
	if f.PathGlob != "" {
		if _, err := path.Match(globToSlash(f.PathGlob), ""); err != nil {
			return fmt.Errorf("--path %q: %w", f.PathGlob, err)
		}
	}
	if f.Fidelity != "" && !f.Fidelity.Known() {
		return fmt.Errorf("--fidelity %q: want router or agent_emitted", f.Fidelity)
	}
	for _, t := range f.Types {
		if !t.Known() {
			return fmt.Errorf("--type %q: not an event type (one of %s)", t, typeList())
		}
	}
	return nil
}

func typeList() string {
	s := make([]string, len(transcript.EventTypes))
	for i, t := range transcript.EventTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func globToSlash(g string) string { return strings.ReplaceAll(g, ".", "/") }

// Warn receives problems met while scanning: malformed or torn lines,
// unreadable files. The scan goes on. The format tells messages of one
// kind from another (warn.List.Addf takes it as the kind).
type Warn func(format string, args ...any)

// matcher is a compiled Filter working on raw lines.
type matcher struct {
	types    [][]byte
	glob     string
	fidelity transcript.Fidelity
	since    string
	until    string
	sinceT   time.Time
	untilT   time.Time
	fields   [][]string
	json     bool
}

func compile(f Filter, p Projection) *matcher {
	m := &matcher{fidelity: f.Fidelity, json: p.JSON}
	for _, t := range f.Types {
		m.types = append(m.types, []byte(t))
	}
	if f.PathGlob != "" {
		m.glob = globToSlash(f.PathGlob)
	}
	if !f.Since.IsZero() {
		m.sinceT = f.Since
		m.since = transcript.FormatTime(f.Since)
	}
	if !f.Until.IsZero() {
		m.untilT = f.Until
		m.until = transcript.FormatTime(f.Until)
	}
	for _, fl := range p.Fields {
		m.fields = append(m.fields, strings.Split(fl, "."))
	}
	return m
}

// match reports whether line passes the filter; err describes a line too
// broken to judge.
func (m *matcher) match(line []byte) (bool, error) {
	// Every line is checked for a type, filter or not, so that garbage is
	// reported rather than printed as if it were an event.
	v, ok, err := rawevent.Type(line)
	if err != nil || !ok {
		return false, malformed(err, "type")
	}
	if len(m.types) > 0 {
		hit := false
		for _, t := range m.types {
			if bytes.Equal(v, t) {
				hit = true
				break
			}
		}
		if !hit {
			return false, nil
		}
	}
	if m.glob != "" {
		v, ok, err := rawjson.Field(line, "path")
		if err != nil || !ok {
			return false, malformed(err, "path")
		}
		p, ok := rawjson.String(v)
		if !ok {
			return false, malformed(nil, "path")
		}
		if hit, _ := path.Match(m.glob, globToSlash(p)); !hit {
			return false, nil
		}
	}
	if m.since != "" || m.until != "" {
		v, ok, err := rawjson.Field(line, "timestamp")
		if err != nil || !ok || len(v) < 2 {
			return false, malformed(err, "timestamp")
		}
		if !m.inRange(v[1 : len(v)-1]) {
			return false, nil
		}
	}
	if m.fidelity != "" {
		ev, err := transcript.DecodeEvent(line)
		if err != nil && !errors.Is(err, transcript.ErrUnknownEventType) && !errors.Is(err, transcript.ErrUnknownBlockType) {
			return false, err
		}
		if !hasFidelity(&ev, m.fidelity) {
			return false, nil
		}
	}
	return true, nil
}

// inRange compares a timestamp with the bounds. Timestamps reel writes are
// fixed-width UTC and compare as bytes; anything else is parsed.
func (m *matcher) inRange(ts []byte) bool {
	if len(ts) == len(transcript.TimeLayout) && ts[len(ts)-1] == 'Z' {
		if m.since != "" && string(ts) < m.since {
			return false
		}
		if m.until != "" && string(ts) >= m.until {
			return false
		}
		return true
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return false
	}
	if !m.sinceT.IsZero() && t.Before(m.sinceT) {
		return false
	}
	if !m.untilT.IsZero() && !t.Before(m.untilT) {
		return false
	}
	return true
}

func hasFidelity(ev *transcript.ExchangeEvent, f transcript.Fidelity) bool {
	if tp := ev.Tool(); tp != nil {
		return tp.Fidelity == f
	}
	if mp := ev.Message(); mp != nil {
		for i := range mp.Blocks {
			if mp.Blocks[i].Fidelity == f {
				return true
			}
		}
	}
	return false
}

func malformed(err error, field string) error {
	if err != nil {
		return fmt.Errorf("%w: %s: %v", transcript.ErrMalformed, field, err)
	}
	return fmt.Errorf("%w: no %s", transcript.ErrMalformed, field)
}

// project appends what the projection prints of line.
func (m *matcher) project(dst, line []byte) []byte {
	if len(m.fields) == 0 {
		dst = append(dst, line...)
		return append(dst, '\n')
	}
	if m.json && len(m.fields) > 1 {
		dst = append(dst, '[')
	}
	for i, f := range m.fields {
		if i > 0 {
			if m.json {
				dst = append(dst, ',')
			} else {
				dst = append(dst, '\t')
			}
		}
		v, ok, _ := rawjson.Lookup(line, f)
		switch {
		case !ok:
			dst = append(dst, "null"...)
		case m.json:
			dst = append(dst, v...)
		default:
			dst = rawjson.AppendText(dst, v)
		}
	}
	if m.json && len(m.fields) > 1 {
		dst = append(dst, ']')
	}
	return append(dst, '\n')
}

// EventCounts says how much a scan read and printed.
type EventCounts struct {
	Lines   int64
	Matched int64
	Bad     int64
}

// Events scans the transcripts at paths in order and writes what proj
// selects of every event f matches. Broken lines are reported to warn and
// skipped; a file that cannot be opened is reported and passed over. The
// error is for the output failing or ctx ending.
func Events(ctx context.Context, w io.Writer, paths []string, f Filter, proj Projection, limits transcript.Limits, warn Warn) (EventCounts, error) {
	var counts EventCounts
	if err := f.Validate(); err != nil {
		return counts, err
	}
	m := compile(f, proj)
	bw := bufio.NewWriterSize(w, 256<<10)
	var out []byte
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return counts, err
		}
		file, err := safefile.Open(p)
		if err != nil {
			warn("open transcript %s: %v", p, err)
			continue
		}
		rd := transcript.NewReader(file)
		rd.SetLimits(limits)
		for {
			line, err := rd.NextLine()
			if err == io.EOF {
				if rd.Line() == 0 {
					warn("%s: %v", p, transcript.ErrEmpty)
				}
				break
			}
			if err != nil {
				counts.Bad++
				warn("%s: %v", p, err)
				var le *transcript.LineError
				if !errors.As(err, &le) || errors.Is(err, transcript.ErrFileTooLarge) {
					break
				}
				continue
			}
			counts.Lines++
			ok, merr := m.match(line)
			if merr != nil {
				counts.Bad++
				warn("%s: line %d: %v", p, rd.Line(), merr)
				continue
			}
			if !ok {
				continue
			}
			counts.Matched++
			out = m.project(out[:0], line)
			if _, err := bw.Write(out); err != nil {
				file.Close()
				return counts, fmt.Errorf("write output: %w", err)
			}
			if counts.Matched&1023 == 0 {
				if err := ctx.Err(); err != nil {
					file.Close()
					return counts, err
				}
			}
		}
		file.Close()
	}
	if err := bw.Flush(); err != nil {
		return counts, fmt.Errorf("write output: %w", err)
	}
	return counts, nil
}
