package otlp

import (
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// reel's own attributes, for what the GenAI conventions have no name for.
const (
	attrRunID        = attribute.Key("reel.run.id")
	attrRunParentID  = attribute.Key("reel.run.parent_id")
	attrRunAttempt   = attribute.Key("reel.run.attempt")
	attrRunStatus    = attribute.Key("reel.run.status")
	attrRunExitCode  = attribute.Key("reel.run.exit_code")
	attrStepName     = attribute.Key("reel.step.name")
	attrStepKind     = attribute.Key("reel.step.kind")
	attrStepPath     = attribute.Key("reel.step.path")
	attrStepIter     = attribute.Key("reel.step.iteration")
	attrStepAttempt  = attribute.Key("reel.step.attempt")
	attrStepStatus   = attribute.Key("reel.step.status")
	attrStepExitCode = attribute.Key("reel.step.exit_code")
	attrStepCommand  = attribute.Key("reel.step.command")
	attrStepOutput   = attribute.Key("reel.step.output")
	attrStepStderr   = attribute.Key("reel.step.stderr")
	attrChildRunID   = attribute.Key("reel.step.child_run_id")
	attrIterations   = attribute.Key("reel.loop.iterations")
	attrStrategy     = attribute.Key("reel.parallel.strategy")
	attrProvider     = attribute.Key("reel.agent.provider")
	attrTurns        = attribute.Key("reel.agent.turns")
	attrReplayedFrom = attribute.Key("reel.agent.replayed_from")
	attrCost         = attribute.Key("reel.usage.cost_usd")
	attrInTokens     = attribute.Key("reel.usage.input_tokens")
	attrOutTokens    = attribute.Key("reel.usage.output_tokens")
	attrCacheRead    = attribute.Key("reel.usage.cache_read_tokens")
	attrCacheWrite   = attribute.Key("reel.usage.cache_write_tokens")
	attrReasoning    = attribute.Key("reel.usage.reasoning_tokens")
	attrTotalTokens  = attribute.Key("reel.usage.total_tokens")
	attrFidelity     = attribute.Key("reel.tool.fidelity")
	attrPlugin       = attribute.Key("reel.plugin.name")
	attrOperation    = attribute.Key("reel.operation.name")
)

// error.type values: low-cardinality classes of how something ended.
const (
	errFailure     = "failure"
	errCancelled   = "cancelled"
	errInterrupted = "interrupted"
	errTool        = "tool_error"
	errNoResult    = "no_result"
)

// stepResult holds the fields of any step result that become attributes.
type stepResult struct {
	ExitCode   *int   `json:"exit_code"`
	Status     string `json:"status"`
	Iterations *int   `json:"iterations"`
	Strategy   string `json:"strategy"`
	ChildRunID string `json:"child_run_id"`
	// Plugin names the AWF plugin that ran an operation or a step type;
	// Operation is an operation's name (PLUGIN.OP, or a built-in's).
	Plugin    string `json:"plugin"`
	Operation string `json:"operation"`
	Output    any    `json:"output"`
	Stderr    any    `json:"stderr"`
}

// decodeStepResult reads a step result. A command step's result, the
// commonest, is taken as is when it arrives as the engine's Go value (a
// live event) instead of going through JSON.
func decodeStepResult(result any) (stepResult, bool) {
	var c *transcript.CommandResult
	switch x := result.(type) {
	case transcript.CommandResult:
		c = &x
	case *transcript.CommandResult:
		c = x
	}
	if c != nil {
		code := c.ExitCode
		return stepResult{ExitCode: &code, Output: c.Output, Stderr: c.Stderr}, true
	}
	var r stepResult
	return r, transcript.DecodeResult(result, &r) == nil
}

func (m *mapper) base(st *step) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 24)
	a = append(a,
		attrRunID.String(m.runID),
		attrStepName.String(text(st.name)),
		attrStepKind.String(text(st.kind)),
		attrStepPath.String(text(st.key.path)),
		attrStepIter.Int(st.key.iteration),
	)
	if st.key.attempt > 0 {
		a = append(a, attrStepAttempt.Int(st.key.attempt))
	}
	return a
}

// endStep emits a step execution's span. sp is its step.completed payload,
// nil when the step never completed.
func (m *mapper) endStep(st *step, ts time.Time, sp *transcript.StepPayload) {
	m.closeTools(st, ts, "no result: the step ended first")
	s := &span{trace: m.traceID, id: st.id, parent: st.parent, start: st.start, end: later(st.start, ts), kind: trace.SpanKindInternal}
	a := m.base(st)
	status, errMsg := runstatus.Interrupted, "interrupted: the step never completed"
	if sp != nil {
		status, errMsg = runstatus.Success, sp.Error
		if errMsg != "" {
			status = runstatus.Failure
			if strings.HasPrefix(errMsg, "cancelled") {
				status = runstatus.Cancelled
			}
		}
	}
	kind := st.kind
	if kind == "" && sp != nil {
		kind = sp.Kind
	}
	if kind == transcript.KindAgent {
		s.name = "invoke_agent " + text(st.name)
		a = append(a, semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(text(st.name)))
		var ar transcript.AgentResult
		if sp != nil && sp.Result != nil && transcript.DecodeResult(sp.Result, &ar) == nil {
			a, s.kind = m.agentAttrs(a, &ar)
		} else {
			s.kind = trace.SpanKindClient
		}
	} else {
		s.name = text(kind + " " + st.key.path)
	}
	if sp != nil && sp.Result != nil && kind != transcript.KindAgent {
		if r, ok := decodeStepResult(sp.Result); ok {
			if r.ExitCode != nil {
				a = append(a, attrStepExitCode.Int(*r.ExitCode))
			}
			if r.Iterations != nil {
				a = append(a, attrIterations.Int(*r.Iterations))
			}
			if r.Strategy != "" {
				a = append(a, attrStrategy.String(text(r.Strategy)))
			}
			if r.Plugin != "" {
				a = append(a, attrPlugin.String(text(r.Plugin)))
			}
			if r.Operation != "" {
				a = append(a, attrOperation.String(text(r.Operation)))
			}
			if status == runstatus.Success && (r.Status == runstatus.Failure || r.Status == runstatus.Cancelled) && kind == transcript.KindTerminal {
				// A terminal state that ends the run in failure is where
				// the run failed.
				status = r.Status
				errMsg = "terminal state " + st.name + ": " + r.Status
			}
			if m.content && kind == transcript.KindCommand {
				if o := valueText(r.Output); o != "" {
					a = append(a, attrStepOutput.String(o))
				}
				if o := valueText(r.Stderr); o != "" {
					a = append(a, attrStepStderr.String(o))
				}
			}
		}
	}
	if st.child != "" {
		a = append(a, attrChildRunID.String(st.child))
	}
	if m.content && st.command != "" {
		a = append(a, attrStepCommand.String(text(st.command)))
	}
	if m.content && len(st.msgs) > 0 {
		a = appendMessages(a, st.msgs)
	}
	a = append(a, attrStepStatus.String(status))
	s.attrs = setStatus(s, a, status, errMsg)
	m.emit(s)
}

// agentAttrs adds an agent step's result: the GenAI model, usage and
// conversation attributes, reel's cost and provider. The span kind is
// CLIENT for CLI agents (the agent runs in its own process) and INTERNAL
// for openai_compatible, whose agent loop reel runs itself.
func (m *mapper) agentAttrs(a []attribute.KeyValue, ar *transcript.AgentResult) ([]attribute.KeyValue, trace.SpanKind) {
	kind := trace.SpanKindClient
	if ar.Provider == "openai_compatible" {
		kind = trace.SpanKindInternal
	}
	if p := providerName(ar.Provider); p != "" {
		a = append(a, semconv.GenAIProviderNameKey.String(p))
	}
	if ar.Provider != "" {
		a = append(a, attrProvider.String(text(ar.Provider)))
	}
	if ar.RequestModel != "" {
		a = append(a, semconv.GenAIRequestModel(text(ar.RequestModel)))
	}
	if ar.Model != "" {
		a = append(a, semconv.GenAIResponseModel(text(ar.Model)))
	}
	// The transcript's usage counts tokens as the conventions do: input
	// includes the cache reads and writes, output the reasoning.
	u := ar.Usage
	a = append(a,
		semconv.GenAIUsageInputTokens(int(u.InputTokens)),
		semconv.GenAIUsageOutputTokens(int(u.OutputTokens)),
	)
	if u.CacheReadTokens > 0 {
		a = append(a, semconv.GenAIUsageCacheReadInputTokens(int(u.CacheReadTokens)))
	}
	if u.CacheWriteTokens > 0 {
		a = append(a, semconv.GenAIUsageCacheCreationInputTokens(int(u.CacheWriteTokens)))
	}
	if u.ReasoningTokens > 0 {
		a = append(a, semconv.GenAIUsageReasoningOutputTokens(int(u.ReasoningTokens)))
	}
	if c, ok := m.stepCost(ar); ok {
		a = append(a, attrCost.Float64(c))
	}
	if ar.SessionID != "" {
		a = append(a, semconv.GenAIConversationID(text(ar.SessionID)))
	}
	if ar.Turns > 0 {
		a = append(a, attrTurns.Int(ar.Turns))
	}
	if ar.ReplayedFrom != "" {
		a = append(a, attrReplayedFrom.String(text(ar.ReplayedFrom)))
	}
	return a, kind
}

// providerName is gen_ai.provider.name for a reel provider: the
// conventions' well-known value where one fits, else the provider's own
// name. Gemini CLI reaches Google through AI Studio, Vertex AI or Code
// Assist, and the transcript does not say which: the conventions' value
// for a Google endpoint not known is gcp.gen_ai (gcp.gemini names the AI
// Studio endpoint alone). Copilot has no well-known value.
func providerName(p string) string {
	switch p {
	case "claude", "anthropic":
		return semconv.GenAIProviderNameAnthropic.Value.AsString()
	case "codex", "openai", "openai_compatible":
		return semconv.GenAIProviderNameOpenAI.Value.AsString()
	case "gemini":
		return semconv.GenAIProviderNameGCPGenAI.Value.AsString()
	case "mistral_vibe", "mistral":
		return semconv.GenAIProviderNameMistralAI.Value.AsString()
	case "github_copilot", "copilot":
		return "github.copilot"
	}
	return text(p)
}

// stepCost is what the agent step cost, as every reader counts it
// (pricing.Table.Step). It adds the step to the run's cost and tokens.
func (m *mapper) stepCost(ar *transcript.AgentResult) (float64, bool) {
	prices := m.prices
	if prices == nil {
		prices = pricing.Default()
	}
	c := prices.Step(ar)
	m.spent.Add(c)
	m.used.Add(ar.Usage)
	return c.USD, c.Known
}

// figures are a run's cost and tokens, its child runs' included.
type figures struct {
	cost  pricing.Total
	usage transcript.Usage
}

// runFigures are the run's figures so far, as reel tree and the run index
// give them: run.completed's account, rr (nil when the run has none),
// which holds every token and the reported costs, sub-workflows' included,
// plus what reel priced from the table in the run's steps and its child
// runs (pricing.RunTotal); without an account, or one without tokens, the
// sums of the steps and the child runs.
func (m *mapper) runFigures(rr *transcript.RunResult) figures {
	m.addKids()
	var recorded *float64
	f := figures{usage: m.used}
	if rr != nil {
		recorded = rr.CostUSD
		if rr.Usage != (transcript.Usage{}) {
			f.usage = rr.Usage
		}
	}
	f.cost = pricing.RunTotal(recorded, m.spent)
	return f
}

// addKids adds the figures of the child runs started so far, each once.
func (m *mapper) addKids() {
	if m.childFigures == nil {
		return
	}
	for _, id := range m.kids {
		if m.counted[id] {
			continue
		}
		if f, ok := m.childFigures(id); ok {
			if m.counted == nil {
				m.counted = map[string]bool{}
			}
			m.counted[id] = true
			m.spent.Add(f.cost)
			m.used.Add(f.usage)
		}
	}
	m.kids = m.kids[:0]
}

// usageAttrs adds a run's figures.
func usageAttrs(a []attribute.KeyValue, f figures) []attribute.KeyValue {
	u := f.usage
	a = append(a, attrInTokens.Int64(u.InputTokens), attrOutTokens.Int64(u.OutputTokens), attrTotalTokens.Int64(u.TotalTokens))
	if u.CacheReadTokens > 0 {
		a = append(a, attrCacheRead.Int64(u.CacheReadTokens))
	}
	if u.CacheWriteTokens > 0 {
		a = append(a, attrCacheWrite.Int64(u.CacheWriteTokens))
	}
	if u.ReasoningTokens > 0 {
		a = append(a, attrReasoning.Int64(u.ReasoningTokens))
	}
	if f.cost.Known {
		a = append(a, attrCost.Float64(f.cost.USD))
	}
	return a
}

func (m *mapper) endTool(t *tool, ts time.Time, p *transcript.ToolPayload) {
	name := t.name
	if name == "" {
		name = p.Name
	}
	s := &span{trace: m.traceID, id: t.id, parent: t.owner.id, start: t.start, end: later(t.start, ts), kind: trace.SpanKindInternal}
	s.name = text("execute_tool " + name)
	a := make([]attribute.KeyValue, 0, 12)
	a = append(a,
		attrRunID.String(m.runID),
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(text(name)),
		semconv.GenAIToolCallID(text(t.callID)),
		attrStepPath.String(text(t.owner.key.path)),
		attrStepIter.Int(t.owner.key.iteration),
	)
	fid := t.fidelity
	if fid == "" {
		fid = p.Fidelity
	}
	if fid != "" {
		a = append(a, attrFidelity.String(text(string(fid))))
	}
	if m.content {
		if v := valueText(t.input); v != "" {
			a = append(a, semconv.GenAIToolCallArgumentsKey.String(v))
		}
		if v := valueText(p.Output); v != "" {
			a = append(a, semconv.GenAIToolCallResultKey.String(v))
		}
	}
	status := runstatus.Success
	if p.Error != "" {
		status = errTool
		if strings.HasPrefix(p.Error, "no result") {
			status = errNoResult
		}
	}
	s.attrs = setStatus(s, a, status, p.Error)
	m.emit(s)
}

// endRun emits the run segment's span. sp is run.completed's payload, nil
// when the run never completed.
func (m *mapper) endRun(ts time.Time, sp *transcript.StepPayload) {
	st := m.run
	name := st.name
	if name == "" && sp != nil {
		name = sp.Name
	}
	s := &span{trace: m.traceID, id: st.id, parent: st.parent, start: st.start, end: later(st.start, ts), kind: trace.SpanKindInternal, runRoot: true}
	s.name = text("invoke_workflow " + name)
	a := make([]attribute.KeyValue, 0, 16)
	a = append(a,
		semconv.GenAIOperationNameInvokeWorkflow,
		semconv.GenAIWorkflowName(text(name)),
		attrRunID.String(m.runID),
	)
	if m.parentRunID != "" {
		a = append(a, attrRunParentID.String(m.parentRunID))
	}
	if st.key.attempt > 0 {
		a = append(a, attrRunAttempt.Int(st.key.attempt))
	}
	status, errMsg := runstatus.Interrupted, "interrupted: the run has no run.completed"
	m.ran = m.runFigures(nil)
	account := false
	if sp != nil {
		status, errMsg = runstatus.Success, sp.Error
		if errMsg != "" {
			status = runstatus.Failure
		}
		var rr transcript.RunResult
		if sp.Result != nil && transcript.DecodeResult(sp.Result, &rr) == nil {
			if rr.Status != "" {
				status = rr.Status
			}
			a = append(a, attrRunExitCode.Int(rr.ExitCode))
			m.ran, account = m.runFigures(&rr), true
		}
		if status != runstatus.Success && errMsg == "" {
			errMsg = "run " + status
		}
	}
	if account || m.ran.cost.Known || m.ran.usage != (transcript.Usage{}) {
		// A run without its account (interrupted) still spent what its
		// steps and child runs did: reel tree shows it.
		a = usageAttrs(a, m.ran)
	}
	if m.content && len(st.msgs) > 0 {
		a = appendMessages(a, st.msgs)
	}
	a = append(a, attrRunStatus.String(text(status)))
	s.attrs = setStatus(s, a, status, errMsg)
	m.emit(s)
}

// setStatus makes an unsuccessful end an error: span status Error with the
// message, and error.type naming the class. Success leaves the status
// unset, as the conventions ask of instrumentation.
func setStatus(s *span, a []attribute.KeyValue, status, msg string) []attribute.KeyValue {
	var class string
	switch status {
	case runstatus.Success, "":
		return a
	case runstatus.Cancelled:
		class = errCancelled
	case runstatus.Interrupted:
		class = errInterrupted
	case errTool, errNoResult:
		class = status
	default:
		class = errFailure
	}
	s.status, s.desc = codes.Error, text(msg)
	return append(a, semconv.ErrorTypeKey.String(class))
}

func later(start, end time.Time) time.Time {
	if end.Before(start) {
		return start
	}
	return end
}
