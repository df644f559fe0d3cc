package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/query"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/webview"
	"github.com/reelhq/reel/transcript"
)

func (s *Server) page(w http.ResponseWriter, r *http.Request, status int, p *webview.Page) {
	p.Workflows = s.opts.Engine != nil
	var buf bytes.Buffer
	if err := s.views.Render(&buf, p); err != nil {
		s.log.Error("render", "page", p.Name, "err", err)
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, title string, err error) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, status, map[string]string{"error": err.Error()})
		return
	}
	s.page(w, r, status, &webview.Page{Name: "error", Title: title, Data: map[string]string{"Title": title, "Message": err.Error()}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// filter reads the list filters from a query string: workflow, status,
// provider, model, since and until (a date or RFC 3339), limit, after.
func filter(q url.Values) (index.Filter, error) {
	f := index.Filter{Workflow: q.Get("workflow"), Status: q.Get("status"), Provider: q.Get("provider"), Model: q.Get("model"), After: q.Get("after")}
	if f.Status != "" && !runstatus.Valid(f.Status) {
		return f, fmt.Errorf("status %q: want one of %s", f.Status, strings.Join(runstatus.All, ", "))
	}
	var err error
	if f.Since, err = parseTime(q.Get("since"), false); err != nil {
		return f, fmt.Errorf("since: %w", err)
	}
	if f.Until, err = parseTime(q.Get("until"), true); err != nil {
		return f, fmt.Errorf("until: %w", err)
	}
	if l := q.Get("limit"); l != "" {
		if f.Limit, err = strconv.Atoi(l); err != nil || f.Limit < 1 {
			return f, fmt.Errorf("limit %q: want a number above 0", l)
		}
	}
	return f, nil
}

// parseTime reads a date (a whole day: until the end of it when end) or an
// RFC 3339 time.
func parseTime(s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		if end {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("%q is neither a date (2006-01-02) nor an RFC 3339 time", s)
	}
	return t, nil
}

type listData struct {
	Page         *index.Page
	Facets       *index.Facets
	Filter       index.Filter
	Statuses     []string
	Since, Until string
	Filtered     bool
	NextURL      string
	Error        string
	Storage      string
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := &listData{Statuses: runstatus.All, Since: q.Get("since"), Until: q.Get("until"), Storage: s.opts.Storage, Page: &index.Page{}}
	f, err := filter(q)
	d.Filter = f
	d.Filtered = f.Workflow != "" || f.Status != "" || f.Provider != "" || f.Model != "" || d.Since != "" || d.Until != ""
	status := http.StatusOK
	if err == nil {
		err = s.ix.Sync(r.Context())
	}
	if err == nil {
		d.Page, err = s.ix.List(r.Context(), f)
	}
	if err != nil {
		d.Error, d.Page, status = err.Error(), &index.Page{}, http.StatusBadRequest
	}
	if d.Facets, err = s.ix.Facets(r.Context()); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "run index", err)
		return
	}
	if d.Page.Next != "" {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("after", d.Page.Next)
		d.NextURL = "/?" + nq.Encode()
	}
	s.page(w, r, status, &webview.Page{Name: "list", Title: "runs", Data: d})
}

func (s *Server) loadRun(w http.ResponseWriter, r *http.Request) (*webview.Page, bool) {
	id := r.PathValue("id")
	src, err := s.runs.ID(id)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "no such run", err)
		return nil, false
	}
	run, err := webview.LoadRun(src, webview.RunOptions{})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "unreadable run", err)
		return nil, false
	}
	p := &webview.Page{Name: "run", Title: run.Workflow, Data: run, Actions: s.actions(run)}
	if !run.Ended {
		p.Live = &webview.Live{Events: "/api/runs/" + id + "/events?format=html", Overview: "/runs/" + id + "/overview", From: run.LastSeq + 1}
	}
	return p, true
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	p, ok := s.loadRun(w, r)
	if !ok {
		return
	}
	run := p.Data.(*webview.Run)
	// The previous run of the same workflow, to compare with.
	if s.ix.Sync(r.Context()) == nil && run.Workflow != "" && !run.Started.IsZero() {
		if prev, err := s.ix.List(r.Context(), index.Filter{Workflow: run.Workflow, Until: run.Started, Limit: 1}); err == nil && len(prev.Runs) > 0 {
			p.Compare = "/diff/" + prev.Runs[0].RunID + "/" + run.ID
		}
	}
	s.page(w, r, http.StatusOK, p)
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	p, ok := s.loadRun(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.views.RenderOverview(w, p); err != nil {
		s.log.Error("render overview", "err", err)
	}
}

type searchData struct {
	Page    *index.SearchPage
	Error   string
	NextURL string
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	d := &searchData{}
	status := http.StatusOK
	if strings.TrimSpace(q) != "" {
		err := s.ix.Sync(r.Context())
		if err == nil {
			d.Page, err = s.ix.Search(r.Context(), q, index.SearchOptions{After: r.URL.Query().Get("after")})
		}
		if err != nil {
			d.Error, status = err.Error(), http.StatusBadRequest
		} else if d.Page.Next != "" {
			d.NextURL = "/search?" + url.Values{"q": {q}, "after": {d.Page.Next}}.Encode()
		}
	}
	s.page(w, r, status, &webview.Page{Name: "search", Title: "search", Query: q, Data: d})
}

type diffData struct {
	Diff    *query.Diff
	Changed int
	// Outputs holds, by step index, the line diff of outputs that changed.
	Outputs map[int][]webview.DiffLine
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	var trees [2]*exectree.Tree
	for i, id := range []string{r.PathValue("a"), r.PathValue("b")} {
		run, err := s.runs.ID(id)
		if err != nil {
			s.fail(w, r, http.StatusNotFound, "no such run", err)
			return
		}
		if trees[i], err = exectree.Build(run, exectree.Options{}); err != nil {
			s.fail(w, r, http.StatusInternalServerError, "unreadable run", err)
			return
		}
	}
	d := &diffData{Diff: query.Compare(trees[0], trees[1]), Outputs: map[int][]webview.DiffLine{}}
	for i, st := range d.Diff.Steps {
		if len(st.Changed) > 0 {
			d.Changed++
		}
		for _, c := range st.Changed {
			if c == "output" && st.A != nil && st.B != nil {
				d.Outputs[i] = webview.Diff(st.A.Output(), st.B.Output())
			}
		}
	}
	s.page(w, r, http.StatusOK, &webview.Page{Name: "diff", Title: "compare runs", Data: d})
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	f, err := filter(r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "", err)
		return
	}
	if err := s.ix.Sync(r.Context()); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "", err)
		return
	}
	page, err := s.ix.List(r.Context(), f)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "", err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) {
	if err := s.ix.Sync(r.Context()); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "", err)
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	page, err := s.ix.Search(r.Context(), q.Get("q"), index.SearchOptions{After: q.Get("after"), Limit: limit})
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "", err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// apiRun writes {"run": summary, "events": [...]}: the events exactly as
// the transcript holds them.
func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	run, err := s.runs.ID(id)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "", err)
		return
	}
	if _, err := s.ix.Update(r.Context(), run.Path); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "", err)
		return
	}
	sum, err := s.ix.Get(r.Context(), id)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "", err)
		return
	}
	head, _ := json.Marshal(sum)
	w.Header().Set("Content-Type", "application/json")
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"run":`)
	bw.Write(head)
	bw.WriteString(`,"events":[`)
	n := 0
	// Damage is reel verify's to report; the API keeps what reads.
	for rec, err := range run.Events(runs.RawLines) {
		if err != nil {
			break
		}
		if !json.Valid(rec.Raw) {
			continue
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n")
		bw.Write(rec.Raw)
		n++
	}
	bw.WriteString("\n]}\n")
	bw.Flush()
}

// apiEvents streams a run's events as Server-Sent Events from seq from (or
// the one after Last-Event-ID), live until run.completed. format=html sends
// each event rendered as the run page shows it.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	run, err := s.runs.ID(id)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "", err)
		return
	}
	var from uint64 = 1
	if v := r.URL.Query().Get("from"); v != "" {
		if from, err = strconv.ParseUint(v, 10, 64); err != nil {
			s.fail(w, r, http.StatusBadRequest, "", fmt.Errorf("from %q: want a seq", v))
			return
		}
	}
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if last, err := strconv.ParseUint(v, 10, 64); err == nil {
			from = last + 1
		}
	}
	html := r.URL.Query().Get("format") == "html"
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, http.StatusInternalServerError, "", errors.New("streaming unsupported"))
		return
	}
	ctx := r.Context()
	// A run that cannot be read is an error response, not an empty stream;
	// a file without its first line yet is a run about to start.
	first, err := run.First()
	if err != nil && !errors.Is(err, transcript.ErrEmpty) {
		s.fail(w, r, http.StatusInternalServerError, "", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": reel event stream\nretry: 1000\n\n")
	flusher.Flush()
	var buf, data []byte
	for rec, err := range run.Follow(ctx, from) {
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(w, "event: error\ndata: %s\n\n", jsonString(err.Error()))
				flusher.Flush()
			}
			return
		}
		ev := rec.Event()
		if html {
			var b bytes.Buffer
			e := webview.LiveEvent(ev, first.Timestamp, nil)
			if err := s.views.RenderEvent(&b, &e, false); err != nil {
				s.log.Error("render event", "err", err)
				return
			}
			data = b.Bytes()
		} else {
			if data, err = transcript.AppendEvent(buf[:0], ev); err != nil {
				continue
			}
			buf = data
		}
		fmt.Fprintf(w, "id: %d\n", ev.Seq)
		for _, line := range bytes.Split(data, []byte("\n")) {
			w.Write([]byte("data: "))
			w.Write(line)
			w.Write([]byte("\n"))
		}
		w.Write([]byte("\n"))
		flusher.Flush()
	}
	fmt.Fprint(w, "event: end\ndata: {}\n\n")
	flusher.Flush()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
