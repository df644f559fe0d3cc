package awfapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/runstatus"
)

// HistoryEntry is one finished execution.
type HistoryEntry struct {
	ID           string    `json:"id" doc:"The run id." example:"550e8400-e29b-41d4-a716-446655440000"`
	WorkflowName string    `json:"workflow_name" doc:"The workflow's name." example:"deploy-prod"`
	Status       string    `json:"status" enum:"completed,failed,cancelled" doc:"completed, failed or cancelled."`
	StartedAt    time.Time `json:"started_at" doc:"When the run started."`
	CompletedAt  time.Time `json:"completed_at" doc:"When it ended."`
	DurationMs   int64     `json:"duration_ms" doc:"How long it ran, in milliseconds (every attempt of a resumed run)."`
}

// HistoryInput filters the history.
type HistoryInput struct {
	Workflow string    `query:"workflow" doc:"Only this workflow's runs." example:"deploy-prod"`
	Status   string    `query:"status" enum:"completed,success,failed,failure,cancelled" doc:"Only runs that ended so: completed (or success), failed (or failure), cancelled."`
	Since    time.Time `query:"since" doc:"Only runs started at or after this time (RFC 3339)."`
	Until    time.Time `query:"until" doc:"Only runs started before this time (RFC 3339)."`
	Limit    int       `query:"limit" minimum:"0" maximum:"1000" doc:"At most this many entries, newest first (default 50)." example:"50"`
}

type historyBody struct {
	Entries []HistoryEntry `json:"entries" doc:"The top-level runs that ended, newest first."`
}

// HistoryOutput is the response of GET /api/history.
type HistoryOutput envelope[historyBody]

// HistoryStats counts finished executions, with AWF's keys.
type HistoryStats struct {
	TotalExecutions int   `doc:"Runs that ended."`
	SuccessCount    int   `doc:"Of which completed."`
	FailedCount     int   `doc:"Of which failed."`
	CancelledCount  int   `doc:"Of which cancelled."`
	AvgDurationMs   int64 `doc:"Their mean duration in milliseconds."`
}

// HistoryStatsOutput is the response of GET /api/history/stats.
type HistoryStatsOutput envelope[HistoryStats]

func (a *API) historyRoutes() {
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodGet, Path: "/api/history", OperationID: "list-history", Tags: []string{"History"},
		Summary: "List finished executions", Description: "Every top-level run of the storage that ended (from the run index), wherever it was started.",
	}, a.history)
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodGet, Path: "/api/history/stats", OperationID: "history-stats", Tags: []string{"History"},
		Summary: "Count finished executions",
	}, a.historyStats)
}

func (a *API) filter(in *HistoryInput) index.Filter {
	f := index.Filter{Workflow: in.Workflow, Since: in.Since, Until: in.Until, Limit: in.Limit, TopLevel: true, Ended: true}
	if s := strings.TrimSpace(in.Status); s != "" {
		f.Status = runstatus.FromAWF(s)
	}
	return f
}

func (a *API) history(ctx context.Context, in *HistoryInput) (*HistoryOutput, error) {
	if err := a.opts.Index.Sync(ctx); err != nil {
		return nil, huma.Error500InternalServerError("run index: " + err.Error())
	}
	page, err := a.opts.Index.List(ctx, a.filter(in))
	if err != nil {
		return nil, huma.Error400BadRequest(err.Error())
	}
	out := &HistoryOutput{}
	out.Body.Body.Entries = make([]HistoryEntry, 0, len(page.Runs))
	for _, r := range page.Runs {
		out.Body.Body.Entries = append(out.Body.Body.Entries, HistoryEntry{ID: r.RunID, WorkflowName: r.Workflow, Status: awfStatus(r.Status),
			StartedAt: r.Started, CompletedAt: r.LastEvent, DurationMs: r.DurationMS})
	}
	return out, nil
}

func (a *API) historyStats(ctx context.Context, in *HistoryInput) (*HistoryStatsOutput, error) {
	if err := a.opts.Index.Sync(ctx); err != nil {
		return nil, huma.Error500InternalServerError("run index: " + err.Error())
	}
	o, err := a.opts.Index.Outcomes(ctx, a.filter(in))
	if err != nil {
		return nil, huma.Error400BadRequest(err.Error())
	}
	out := &HistoryStatsOutput{}
	out.Body.Body = HistoryStats{TotalExecutions: o.Total, SuccessCount: o.Success, FailedCount: o.Failure, CancelledCount: o.Cancelled, AvgDurationMs: o.MeanDurationMS}
	return out, nil
}
