package awfapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// Event is the data of one frame of an execution's event stream: AWF's.
type Event struct {
	Kind   string `json:"kind" enum:"step.started,step.completed,step.failed,step.call_workflow.started,step.call_workflow.completed,message.user,message.assistant,tool.call,tool.result,workflow.completed,workflow.failed" doc:"What happened."`
	RunID  string `json:"run_id" doc:"The execution (run) id."`
	Seq    uint64 `json:"seq,omitempty" doc:"The event's seq in the transcript (also the frame's id)."`
	Status string `json:"status,omitempty" doc:"running, completed, failed or cancelled."`
	Step   string `json:"step,omitempty" doc:"The step's name."`
	Error  string `json:"error,omitempty" doc:"Why the step or the workflow failed."`
}

// awfEvent is ev as AWF's stream reports it, and whether it reports it.
func awfEvent(ev *transcript.ExchangeEvent) (Event, bool) {
	e := Event{Kind: string(ev.Type), RunID: ev.RunID, Seq: ev.Seq}
	p := ev.Step()
	switch ev.Type {
	case transcript.StepStarted:
		if !awfStepEvent(p) {
			return e, false
		}
		e.Step, e.Status = p.Name, "running"
	case transcript.StepCompleted:
		if !awfStepEvent(p) {
			return e, false
		}
		e.Step, e.Status = p.Name, "completed"
		if p.Error != "" {
			e.Kind, e.Status, e.Error = "step.failed", "failed", p.Error
		}
	case transcript.CallWorkflowStarted, transcript.CallWorkflowCompleted:
		if p != nil {
			e.Step = p.Name
		}
	case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
	case transcript.RunCompleted:
		st, _ := runstatus.Completed(p)
		e.Seq = 0 // AWF's terminal frame carries no seq
		if st == runstatus.Success {
			e.Kind, e.Status = "workflow.completed", "completed"
		} else {
			e.Kind, e.Status = "workflow.failed", awfStatus(st)
			if p != nil {
				e.Error = p.Error
			}
		}
	default:
		return e, false
	}
	return e, true
}

var reflectEvent = reflect.TypeOf(Event{})

// StreamInput names the execution to follow.
type StreamInput struct {
	ID          string `path:"id" doc:"The execution (run) id." example:"550e8400-e29b-41d4-a716-446655440000"`
	LastEventID string `header:"Last-Event-ID" doc:"Go on after this frame id (a transcript seq): what a reconnecting EventSource sends."`
}

func (a *API) eventRoutes() {
	data := a.huma.OpenAPI().Components.Schemas.Schema(reflectEvent, true, "Event")
	frame := &huma.Schema{
		Title: "Event message", Type: huma.TypeObject, Required: []string{"data"},
		Properties: map[string]*huma.Schema{
			"id":    {Type: huma.TypeInteger, Description: "The transcript seq of the event (absent on the terminal frame)."},
			"data":  data,
			"retry": {Type: huma.TypeInteger, Description: "The retry time in milliseconds."},
		},
	}
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodGet, Path: "/api/executions/{id}/events", OperationID: "stream-execution-events", Tags: []string{"Executions"},
		Summary: "Follow an execution's events (Server-Sent Events)",
		Description: "The current attempt's events, from its start (or after Last-Event-ID), live until the run ends: " +
			"a data frame per event in AWF's shape, the transcript seq as the frame id, workflow.completed or workflow.failed last.",
		Errors: []int{http.StatusNotFound},
		Responses: map[string]*huma.Response{"200": {Description: "The event stream.", Content: map[string]*huma.MediaType{
			"text/event-stream": {Schema: &huma.Schema{Title: "Server Sent Events", Type: huma.TypeArray, Items: frame,
				Description: "Each item is one SSE frame, serialized as UTF-8 text per the SSE specification."}},
		}}},
	}, a.streamEvents)
}

func (a *API) streamEvents(ctx context.Context, in *StreamInput) (*huma.StreamResponse, error) {
	path, err := a.transcriptOf(in.ID)
	if err != nil {
		return nil, notFoundExecution(in.ID)
	}
	var from uint64
	if v := in.LastEventID; v != "" {
		if last, err := strconv.ParseUint(v, 10, 64); err == nil {
			from = last + 1
		}
	}
	if from == 0 {
		st, err := readState(path, a.opts.Limits)
		if err != nil {
			return nil, huma.Error500InternalServerError("read execution " + in.ID + ": " + err.Error())
		}
		from = max(st.attemptSeq, 1)
	}
	events := runs.Open(path, runs.Options{Limits: a.opts.Limits, Poll: a.opts.Poll}).Follow(ctx, from)
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		hctx.SetHeader("Content-Type", "text/event-stream")
		hctx.SetHeader("Cache-Control", "no-cache")
		hctx.SetHeader("X-Accel-Buffering", "no")
		w := hctx.BodyWriter()
		flush := func() {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		send := func(e Event, id uint64) bool {
			var buf []byte
			if id > 0 {
				buf = append(buf, "id: "...)
				buf = strconv.AppendUint(buf, id, 10)
				buf = append(buf, '\n')
			}
			b, _ := json.Marshal(e)
			buf = append(buf, "data: "...)
			buf = append(buf, b...)
			buf = append(buf, "\n\n"...)
			if _, err := w.Write(buf); err != nil {
				return false
			}
			flush()
			return true
		}
		hctx.SetStatus(http.StatusOK)
		flush()
		// Damaged lines are left out by the reader; the sequence ends
		// after run.completed, with ctx, or with the writer gone.
		for rec, err := range events {
			if errors.Is(err, transcript.ErrWriterGone) {
				send(Event{Kind: "workflow.failed", RunID: in.ID, Status: "failed", Error: "interrupted: the process running it is gone"}, 0)
				return
			}
			if err != nil {
				return
			}
			ev := rec.Event()
			if ev == nil {
				continue
			}
			e, ok := awfEvent(ev)
			if !ok {
				continue
			}
			if !send(e, ev.Seq) {
				return
			}
		}
	}}, nil
}
