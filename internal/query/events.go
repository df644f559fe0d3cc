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
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
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

// matcher is a compiled Filter working on raw lines.
type matcher struct {
	types    []transcript.EventType
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
	m.types = f.Types
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

// match reports whether the record passes the filter. A line too broken
// to judge is reported as damage (runs) and does not match.
func (m *matcher) match(rec *runs.Record) bool {
	if len(m.types) > 0 && !slices.Contains(m.types, rec.Type) {
		return false
	}
	if m.glob != "" || m.since != "" || m.until != "" {
		env := rec.Envelope()
		if env == nil {
			return false
		}
		if m.glob != "" {
			if hit, _ := path.Match(m.glob, globToSlash(string(env.Path))); !hit {
				return false
			}
		}
		if (m.since != "" || m.until != "") && !m.inRange(env.Timestamp) {
			return false
		}
	}
	if m.fidelity != "" {
		ev := rec.Event()
		if ev == nil || !hasFidelity(ev, m.fidelity) {
			return false
		}
	}
	return true
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
}

// Events scans the runs' transcripts in order and writes what proj selects
// of every event f matches. Damage is reported in each run's warnings
// (runs), and a transcript that cannot be read is a warning there too:
// the scan goes on. The error is for the output failing or ctx ending.
func Events(ctx context.Context, w io.Writer, list []*runs.Run, f Filter, proj Projection) (EventCounts, error) {
	var counts EventCounts
	if err := f.Validate(); err != nil {
		return counts, err
	}
	m := compile(f, proj)
	bw := bufio.NewWriterSize(w, 256<<10)
	var out []byte
	for _, run := range list {
		if err := ctx.Err(); err != nil {
			return counts, err
		}
		for rec, err := range run.Events(runs.RawLines) {
			if err != nil {
				run.Warnings().Add("unreadable", err.Error())
				break
			}
			counts.Lines++
			if !m.match(rec) {
				continue
			}
			counts.Matched++
			out = m.project(out[:0], rec.Raw)
			if _, err := bw.Write(out); err != nil {
				return counts, fmt.Errorf("write output: %w", err)
			}
			if counts.Matched&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return counts, err
				}
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return counts, fmt.Errorf("write output: %w", err)
	}
	return counts, nil
}
