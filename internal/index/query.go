package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/runstatus"
)

// Filter selects runs. Zero fields select everything.
type Filter struct {
	Workflow string
	// Status is one of the runstatus vocabulary.
	Status   string
	Provider string
	Model    string
	// Since and Until bound the run's start: Since <= start < Until.
	Since, Until time.Time
	// Limit is the page size (default 50, at most 1000).
	Limit int
	// After is the cursor of the previous page (Page.Next).
	After string
	// TopLevel leaves out sub-workflow runs; Ended leaves out the runs
	// without a run.completed (running and interrupted ones).
	TopLevel, Ended bool
}

// Page is one page of runs, newest first.
type Page struct {
	Runs []Run `json:"runs"`
	// Next is the cursor of the following page, empty on the last.
	Next string `json:"next,omitempty"`
	// Total counts every run the filter selects.
	Total int `json:"total"`
}

const runColumns = `run_id, parent_run_id, workflow, imported, untimed, started, last_event, ended, status, exit_code, duration_ms, error,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, total_tokens, cost_usd, unpriced_steps,
	steps, failed_steps, tool_calls, tool_errors, events, providers, models`

func (ix *Index) scanRun(rows interface{ Scan(...any) error }) (Run, bool, error) {
	var (
		r              Run
		started, last  int64
		ended          bool
		exit           sql.NullInt64
		cost           sql.NullFloat64
		providers, mod string
	)
	err := rows.Scan(&r.RunID, &r.ParentRunID, &r.Workflow, &r.Imported, &r.Untimed, &started, &last, &ended, &r.Status, &exit, &r.DurationMS, &r.Error,
		&r.Usage.InputTokens, &r.Usage.OutputTokens, &r.Usage.CacheReadTokens, &r.Usage.CacheWriteTokens, &r.Usage.ReasoningTokens, &r.Usage.TotalTokens, &cost, &r.UnpricedSteps,
		&r.Steps, &r.FailedSteps, &r.ToolCalls, &r.ToolErrors, &r.Events, &providers, &mod)
	if err != nil {
		return r, false, err
	}
	r.Started, r.LastEvent = time.UnixMicro(started).UTC(), time.UnixMicro(last).UTC()
	if exit.Valid {
		e := int(exit.Int64)
		r.ExitCode = &e
	}
	if cost.Valid {
		c := cost.Float64
		r.CostUSD = &c
	}
	r.Tokens = r.Usage.TotalTokens
	r.Providers, r.Models = splitSet(providers), splitSet(mod)
	r.Path = ix.file(r.RunID)
	if !ended {
		r.Status = runstatus.Open(r.Path)
	}
	return r, ended, nil
}

// where builds the SQL condition of f, leaving out the cursor.
func (f *Filter) where() (string, []any, error) {
	var conds []string
	var args []any
	if f.Workflow != "" {
		conds = append(conds, "workflow = ?")
		args = append(args, f.Workflow)
	}
	switch {
	case f.Status == "":
	case runstatus.Ended(f.Status):
		conds = append(conds, "ended = 1 AND status = ?")
		args = append(args, f.Status)
	case runstatus.Valid(f.Status):
		// running or interrupted: told apart per run, after the query
		conds = append(conds, "ended = 0")
	default:
		return "", nil, fmt.Errorf("status %q: want one of %s", f.Status, strings.Join(runstatus.All, ", "))
	}
	if f.Provider != "" {
		conds = append(conds, "providers LIKE ? ESCAPE '\\'")
		args = append(args, "%,"+likeEscape(f.Provider)+",%")
	}
	if f.Model != "" {
		conds = append(conds, "models LIKE ? ESCAPE '\\'")
		args = append(args, "%,"+likeEscape(f.Model)+",%")
	}
	if !f.Since.IsZero() {
		conds = append(conds, "started >= ?")
		args = append(args, f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "started < ?")
		args = append(args, f.Until.UnixMicro())
	}
	if f.TopLevel {
		conds = append(conds, "parent_run_id = ''")
	}
	if f.Ended {
		conds = append(conds, "ended = 1")
	}
	if len(conds) == 0 {
		return "1", nil, nil
	}
	return strings.Join(conds, " AND "), args, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ErrBadCursor is returned for a cursor List did not make.
var ErrBadCursor = errors.New("bad page cursor")

func parseCursor(c string) (int64, string, error) {
	us, id, ok := strings.Cut(c, "_")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", fmt.Errorf("%w %q", ErrBadCursor, c)
	}
	return n, id, nil
}

// List returns one page of the runs f selects, newest first.
func (ix *Index) List(ctx context.Context, f Filter) (*Page, error) {
	return repaired(ctx, ix, func() (*Page, error) { return ix.list(ctx, f) })
}

func (ix *Index) list(ctx context.Context, f Filter) (*Page, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	f.Limit = min(f.Limit, 1000)
	where, args, err := f.where()
	if err != nil {
		return nil, err
	}
	post := f.Status == runstatus.Running || f.Status == runstatus.Interrupted
	page := &Page{Runs: []Run{}}
	if !post {
		if err := ix.conn().QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE `+where, args...).Scan(&page.Total); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
	}
	cursor := f.After
	for {
		w, a := where, args
		if cursor != "" {
			us, id, err := parseCursor(cursor)
			if err != nil {
				return nil, err
			}
			w += " AND (started, run_id) < (?, ?)"
			a = append(append([]any{}, args...), us, id)
		}
		batch := f.Limit + 1
		rows, err := ix.conn().QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE `+w+` ORDER BY started DESC, run_id DESC LIMIT ?`, append(a, batch)...)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		n := 0
		var last Run
		for rows.Next() {
			r, _, err := ix.scanRun(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("list runs: %w", err)
			}
			n++
			last = r
			if post && r.Status != f.Status {
				continue
			}
			if len(page.Runs) == f.Limit {
				// one more exists: the page ends at its predecessor
				l := page.Runs[len(page.Runs)-1]
				page.Next = fmt.Sprintf("%d_%s", l.Started.UnixMicro(), l.RunID)
				break
			}
			page.Runs = append(page.Runs, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		if page.Next != "" || n < batch {
			break
		}
		cursor = fmt.Sprintf("%d_%s", last.Started.UnixMicro(), last.RunID)
	}
	if post {
		// Open runs are few: count them by probing each.
		rows, err := ix.conn().QueryContext(ctx, `SELECT run_id FROM runs WHERE `+where, args...)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, fmt.Errorf("list runs: %w", err)
			}
			if runstatus.Open(ix.file(id)) == f.Status {
				page.Total++
			}
		}
	}
	return page, nil
}

// ErrNotIndexed is returned by Get for a run the index does not hold.
var ErrNotIndexed = errors.New("run not in the index")

// Get returns one run.
func (ix *Index) Get(ctx context.Context, runID string) (Run, error) {
	return repaired(ctx, ix, func() (Run, error) { return ix.get(ctx, runID) })
}

func (ix *Index) get(ctx context.Context, runID string) (Run, error) {
	r, _, err := ix.scanRun(ix.conn().QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE run_id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %s: %w", runID, ErrNotIndexed)
	}
	if err != nil {
		return r, fmt.Errorf("run %s: %w", runID, err)
	}
	return r, nil
}

// Children returns the runs whose parent is runID, in start order.
func (ix *Index) Children(ctx context.Context, runID string) ([]Run, error) {
	return repaired(ctx, ix, func() ([]Run, error) { return ix.children(ctx, runID) })
}

func (ix *Index) children(ctx context.Context, runID string) ([]Run, error) {
	rows, err := ix.conn().QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE parent_run_id = ? ORDER BY started, run_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("child runs of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, _, err := ix.scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("child runs of %s: %w", runID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Facets are the values the list's filters offer.
type Facets struct {
	Workflows []string `json:"workflows"`
	Providers []string `json:"providers"`
	Models    []string `json:"models"`
}

// Facets lists the distinct workflows, providers and models indexed.
func (ix *Index) Facets(ctx context.Context) (*Facets, error) {
	return repaired(ctx, ix, func() (*Facets, error) { return ix.facets(ctx) })
}

func (ix *Index) facets(ctx context.Context) (*Facets, error) {
	fc := &Facets{Workflows: []string{}, Providers: []string{}, Models: []string{}}
	rows, err := ix.conn().QueryContext(ctx, `SELECT DISTINCT workflow FROM runs ORDER BY workflow`)
	if err != nil {
		return nil, fmt.Errorf("facets: %w", err)
	}
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			rows.Close()
			return nil, fmt.Errorf("facets: %w", err)
		}
		fc.Workflows = append(fc.Workflows, w)
	}
	rows.Close()
	for _, col := range []struct {
		name string
		dst  *[]string
	}{{"providers", &fc.Providers}, {"models", &fc.Models}} {
		rows, err := ix.conn().QueryContext(ctx, `SELECT DISTINCT `+col.name+` FROM runs WHERE `+col.name+` != ''`)
		if err != nil {
			return nil, fmt.Errorf("facets: %w", err)
		}
		set := map[string]bool{}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return nil, fmt.Errorf("facets: %w", err)
			}
			for _, v := range splitSet(s) {
				set[v] = true
			}
		}
		rows.Close()
		for v := range set {
			*col.dst = append(*col.dst, v)
		}
		slices.Sort(*col.dst)
	}
	return fc, nil
}

// Active returns the transcripts of the runs with events in [since, until)
// (a zero bound is open), of workflow when it is set, in order of start:
// what reel events --all reads, so that a narrow window reads only the
// runs that were active in it. A run whose events carry no time is always
// included; the events' own times decide.
func (ix *Index) Active(ctx context.Context, workflow string, since, until time.Time) ([]string, error) {
	return repaired(ctx, ix, func() ([]string, error) { return ix.active(ctx, workflow, since, until) })
}

func (ix *Index) active(ctx context.Context, workflow string, since, until time.Time) ([]string, error) {
	conds := []string{"1"}
	var args []any
	if workflow != "" {
		conds = append(conds, "workflow = ?")
		args = append(args, workflow)
	}
	if !since.IsZero() {
		conds = append(conds, "(started = 0 OR last_event >= ?)")
		args = append(args, since.UnixMicro())
	}
	if !until.IsZero() {
		// <=: the index keeps microseconds, an event's time may be finer.
		conds = append(conds, "(started = 0 OR started <= ?)")
		args = append(args, until.UnixMicro())
	}
	rows, err := ix.conn().QueryContext(ctx, `SELECT run_id FROM runs WHERE `+strings.Join(conds, " AND ")+` ORDER BY started, run_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("active runs: %w", err)
	}
	defer rows.Close()
	var paths []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("active runs: %w", err)
		}
		paths = append(paths, ix.file(id))
	}
	return paths, rows.Err()
}

// Outcomes counts the ended runs a filter selects by status, with their
// mean duration (of those whose duration is known: not Run.Untimed).
type Outcomes struct {
	Total                       int
	Success, Failure, Cancelled int
	MeanDurationMS              int64
}

// Outcomes counts the ended runs f selects (its Limit and After do not
// apply).
func (ix *Index) Outcomes(ctx context.Context, f Filter) (Outcomes, error) {
	f.Ended = true
	where, args, err := f.where()
	if err != nil {
		return Outcomes{}, err
	}
	// An untimed run's duration is unknown: it is left out of the mean.
	rows, err := ix.conn().QueryContext(ctx, `SELECT status, count(*), coalesce(sum(duration_ms), 0), count(*) - sum(untimed) FROM runs WHERE `+where+` GROUP BY status`, args...)
	if err != nil {
		return Outcomes{}, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	var o Outcomes
	var sum int64
	timed := 0
	for rows.Next() {
		var st string
		var n, t int
		var d int64
		if err := rows.Scan(&st, &n, &d, &t); err != nil {
			return Outcomes{}, fmt.Errorf("count runs: %w", err)
		}
		switch st {
		case runstatus.Success:
			o.Success += n
		case runstatus.Failure:
			o.Failure += n
		case runstatus.Cancelled:
			o.Cancelled += n
		}
		o.Total += n
		sum += d
		timed += t
	}
	if err := rows.Err(); err != nil {
		return Outcomes{}, fmt.Errorf("count runs: %w", err)
	}
	if timed > 0 {
		o.MeanDurationMS = sum / int64(timed)
	}
	return o, nil
}
