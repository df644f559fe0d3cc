package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reelhq/reel/internal/tools"
	"github.com/reelhq/reel/transcript"
)

const (
	defaultBaseURL  = "https://api.openai.com/v1"
	defaultMaxTurns = 20
	// anthropic is openai_compatible pointed at Anthropic's Chat
	// Completions compatible endpoint, with its key variable.
	anthropicBaseURL = "https://api.anthropic.com/v1"
)

// ErrMaxTurns is returned when the model still asks for tools after
// options.max_turns model requests.
var ErrMaxTurns = errors.New("max_turns reached")

// openAIConfig is an openai_compatible step's options, checked.
type openAIConfig struct {
	provider    string
	baseURL     string
	model       string
	apiKey      string
	maxTurns    int
	maxRetries  int
	temperature *float64
	maxTokens   int64
	// maxCompletionTokens is sent as max_completion_tokens, the newer
	// name OpenAI prefers; maxTokens as the older max_tokens.
	maxCompletionTokens int64
	topP                *float64
	tools               []tools.Definition
	bashTimeout         time.Duration
	bashEnv             []string // variables the Bash tool passes on besides tools.BashEnv
}

// openAIConfigFrom checks an HTTP step's options: where it sends (base URL
// and key), the limits and sampling of its requests, its tools.
func openAIConfigFrom(req Request) (*openAIConfig, error) {
	c := &openAIConfig{baseURL: defaultBaseURL, maxTurns: defaultMaxTurns, maxRetries: 2, provider: req.Provider}
	if c.provider == "" {
		c.provider = "openai_compatible"
	}
	var err error
	for _, check := range []func(Request) error{c.endpoint, c.limits, c.toolset} {
		if err = check(req); err != nil {
			return nil, fmt.Errorf("agent %s: %w", c.provider, err)
		}
	}
	return c, nil
}

// endpoint reads where the step sends: options.base_url, else the
// variable the provider's own SDKs read (a proxy, a gateway, a local
// server), else the public endpoint; the model; the key.
func (c *openAIConfig) endpoint(req Request) error {
	o := req.Options
	keyEnv, urlEnv := "OPENAI_API_KEY", "OPENAI_BASE_URL"
	if req.Provider == "anthropic" {
		c.baseURL, keyEnv, urlEnv = anthropicBaseURL, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
	}
	s, err := optString(o, "base_url")
	if err != nil {
		return err
	}
	source := "options.base_url"
	if s == "" {
		s, _ = lookupEnv(req.Env, urlEnv)
		source = "$" + urlEnv
	}
	if s != "" {
		u, perr := url.Parse(s)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s %q: want an http or https URL", source, s)
		}
		c.baseURL = strings.TrimRight(s, "/")
	}
	if c.model, err = optString(o, "model"); err != nil {
		return err
	}
	if c.model == "" {
		return errors.New("options.model is required")
	}
	// The key comes from the environment, never from the workflow file,
	// unless the user wrote it there themselves (api_key).
	if c.apiKey, err = optString(o, "api_key"); err != nil || c.apiKey != "" {
		return err
	}
	envName := keyEnv
	if s, err := optString(o, "api_key_env"); err != nil {
		return err
	} else if s != "" {
		envName = s
	}
	// No key is fine: local servers (llama.cpp, Ollama, vLLM) need none.
	c.apiKey, _ = lookupEnv(req.Env, envName)
	return nil
}

// limits reads how many requests the step may make and what each asks
// for: max_turns, max_retries, temperature, max_tokens or
// max_completion_tokens, top_p.
func (c *openAIConfig) limits(req Request) error {
	o := req.Options
	if n, ok, err := optInt(o, "max_turns"); err != nil {
		return err
	} else if ok {
		if n < 1 || n > 1000 {
			return fmt.Errorf("options.max_turns %d: want 1..1000", n)
		}
		c.maxTurns = int(n)
	}
	if n, ok, err := optInt(o, "max_retries"); err != nil {
		return err
	} else if ok {
		if n < 0 || n > 10 {
			return fmt.Errorf("options.max_retries %d: want 0..10", n)
		}
		c.maxRetries = int(n)
	}
	if f, ok, err := optFloat(o, "temperature"); err != nil {
		return err
	} else if ok {
		c.temperature = &f
	}
	if n, ok, err := optInt(o, "max_tokens"); err != nil {
		return err
	} else if ok {
		c.maxTokens = n
	}
	if n, ok, err := optInt(o, "max_completion_tokens"); err != nil {
		return err
	} else if ok {
		if c.maxTokens > 0 {
			return errors.New("options.max_completion_tokens and max_tokens name the same limit; set one")
		}
		c.maxCompletionTokens = n
	}
	if f, ok, err := optFloat(o, "top_p"); err != nil {
		return err
	} else if ok {
		if f < 0 || f > 1 {
			return fmt.Errorf("options.top_p %v: want 0..1", f)
		}
		c.topP = &f
	}
	return nil
}

// toolset reads the builtin tools the step offers (options.tools by name;
// an empty list offers none) and the Bash tool's options.
func (c *openAIConfig) toolset(req Request) error {
	o := req.Options
	var err error
	if c.bashEnv, c.bashTimeout, err = routerOptions(o); err != nil {
		return err
	}
	all := tools.Definitions()
	c.tools = all
	names, ok, err := optStrings(o, "tools")
	if err != nil || !ok {
		return err
	}
	c.tools = nil
	for _, n := range names {
		i := slices.IndexFunc(all, func(d tools.Definition) bool { return d.Name == n })
		if i < 0 {
			return fmt.Errorf("options.tools: unknown tool %q (builtin: Read, Write, Edit, Bash, Glob, Grep)", n)
		}
		c.tools = append(c.tools, all[i])
	}
	return nil
}

// toolCall is one tool call assembled from streamed deltas.
type toolCall struct {
	id, name string
	args     strings.Builder
}

// turn accumulates one streamed model response.
type turn struct {
	text, thinking strings.Builder
	calls          []*toolCall
	byIndex        map[int64]*toolCall
	finish         string
	model          string
	usage          *transcript.Usage
}

func (t *turn) add(chunk openai.ChatCompletionChunk) {
	if chunk.Model != "" {
		t.model = chunk.Model
	}
	if chunk.JSON.Usage.Valid() {
		u := chunk.Usage
		t.usage = &transcript.Usage{
			InputTokens:      u.PromptTokens,
			OutputTokens:     u.CompletionTokens,
			CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
			CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
			ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
			TotalTokens:      u.PromptTokens + u.CompletionTokens,
		}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // reel asks for one choice; ignore any others
		}
		d := ch.Delta
		t.text.WriteString(d.Content)
		// reasoning_content (DeepSeek, xAI, vLLM) and reasoning (OpenRouter,
		// Ollama) are not in the OpenAI schema; the SDK keeps them as extras.
		for _, key := range []string{"reasoning_content", "reasoning"} {
			if f, ok := d.JSON.ExtraFields[key]; ok {
				var s string
				if json.Unmarshal([]byte(f.Raw()), &s) == nil {
					t.thinking.WriteString(s)
				}
			}
		}
		for _, tc := range d.ToolCalls {
			c := t.byIndex[tc.Index]
			// A new id at a used index is a new call: some servers send
			// every call at index 0.
			if c == nil || (tc.ID != "" && c.id != "" && tc.ID != c.id) {
				c = &toolCall{}
				if t.byIndex == nil {
					t.byIndex = map[int64]*toolCall{}
				}
				t.byIndex[tc.Index] = c
				t.calls = append(t.calls, c)
			}
			if tc.ID != "" {
				c.id = tc.ID
			}
			if tc.Function.Name != "" {
				c.name = tc.Function.Name
			}
			c.args.WriteString(tc.Function.Arguments)
		}
		if ch.FinishReason != "" {
			t.finish = ch.FinishReason
		}
	}
}

// toolInput is a call's arguments as recorded: parsed JSON when they parse,
// else the text the model sent.
func toolInput(args string) any {
	if strings.TrimSpace(args) == "" {
		return map[string]any{}
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	return args
}

func (t *turn) blocks() []transcript.ContentBlock {
	var b []transcript.ContentBlock
	if s := t.thinking.String(); s != "" {
		b = append(b, transcript.ContentBlock{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: s})
	}
	if s := t.text.String(); s != "" {
		b = append(b, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: s})
	}
	for _, c := range t.calls {
		b = append(b, transcript.ContentBlock{
			Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted,
			ToolName: c.name, ToolID: c.id, ToolInput: toolInput(c.args.String()),
		})
	}
	return b
}

func (c *openAIConfig) service() openai.ChatCompletionService {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = 5 * time.Minute
	// The service is built without openai.NewClient on purpose: the client
	// reads OPENAI_* from the process environment, while a step's
	// environment is req.Env and its endpoint is options.base_url.
	opts := []option.RequestOption{
		option.WithHTTPClient(&http.Client{Transport: transport}),
		option.WithBaseURL(c.baseURL + "/"),
		option.WithMaxRetries(c.maxRetries),
	}
	if c.apiKey != "" {
		opts = append(opts, option.WithAPIKey(c.apiKey))
	}
	return openai.NewChatCompletionService(opts...)
}

func (c *openAIConfig) params(messages []openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(c.model),
		Messages:      messages,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if c.temperature != nil {
		p.Temperature = openai.Float(*c.temperature)
	}
	if c.maxTokens > 0 {
		p.MaxTokens = openai.Int(c.maxTokens)
	}
	if c.maxCompletionTokens > 0 {
		p.MaxCompletionTokens = openai.Int(c.maxCompletionTokens)
	}
	if c.topP != nil {
		p.TopP = openai.Float(*c.topP)
	}
	for _, d := range c.tools {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        d.Name,
			Description: openai.String(d.Description),
			Parameters:  shared.FunctionParameters(d.Parameters),
		}))
	}
	return p
}

// describeAPIError adds what the server said to the SDK's bare status line.
func describeAPIError(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		if msg != "" {
			return fmt.Errorf("HTTP %d: %s", apiErr.StatusCode, msg)
		}
		return fmt.Errorf("HTTP %d", apiErr.StatusCode)
	}
	return err
}

// openAIChat is an openai_compatible conversation: the history grows by
// each user message, each assistant reply (with its tool calls) and each
// tool answer, and every request carries all of it.
type openAIChat struct {
	cfg      *openAIConfig
	svc      openai.ChatCompletionService
	router   *tools.Router
	emit     Emit
	messages []openai.ChatCompletionMessageParamUnion
	model    string
}

// newChat starts a conversation, or continues history (another step's)
// when it is not empty.
func (c *openAIConfig) newChat(req Request, emit Emit, history []openai.ChatCompletionMessageParamUnion) (*openAIChat, error) {
	allow := make([]string, 0, len(c.tools))
	for _, d := range c.tools {
		allow = append(allow, d.Name)
	}
	router, err := tools.NewRouter(req.Dir, tools.Emit(emit), tools.Options{Env: req.Env, PassEnv: c.bashEnv, BashTimeout: c.bashTimeout, Allow: allow})
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", c.provider, err)
	}
	ch := &openAIChat{cfg: c, svc: c.service(), router: router, emit: emit, model: c.model}
	ch.messages = slices.Clone(history)
	if req.SystemPrompt != "" {
		// A continued conversation takes this step's system prompt in
		// place of the one it had.
		ch.messages = slices.DeleteFunc(ch.messages, func(m openai.ChatCompletionMessageParamUnion) bool { return m.OfSystem != nil })
		ch.messages = append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage(req.SystemPrompt)}, ch.messages...)
	}
	return ch, nil
}

// send adds a user message and runs the model, and the tools it asks for,
// until it answers without tool calls or max_turns requests were made. The
// result is this user turn's: Turns counts its model requests.
func (ch *openAIChat) send(ctx context.Context, prompt string) (*transcript.AgentResult, error) {
	c := ch.cfg
	res := &transcript.AgentResult{Model: ch.model}
	fail := func(err error) (*transcript.AgentResult, error) {
		return res, fmt.Errorf("agent %s: %w", c.provider, err)
	}
	ch.messages = append(ch.messages, openai.UserMessage(prompt))
	emit := ch.emit

	for n := 1; ; n++ {
		if n > c.maxTurns {
			return fail(fmt.Errorf("%w (%d model requests) and the model still asks for tools", ErrMaxTurns, c.maxTurns))
		}
		t, err := c.stream(ctx, ch.svc, ch.messages)
		res.Turns = n
		if t.model != "" {
			res.Model, ch.model = t.model, t.model
		}
		if t.usage != nil {
			res.Usage.Add(*t.usage)
		}
		// What the model said before a failure is still recorded.
		if blocks := t.blocks(); len(blocks) > 0 {
			if eerr := emit(transcript.ExchangeEvent{
				Type: transcript.MessageAssistant, Timestamp: time.Now(),
				Payload: &transcript.MessagePayload{Role: "assistant", Blocks: blocks},
			}); eerr != nil {
				return fail(fmt.Errorf("record message.assistant: %w", eerr))
			}
		}
		res.Output = t.text.String()
		if err != nil {
			return fail(err)
		}

		asst := openai.ChatCompletionAssistantMessageParam{}
		if s := t.text.String(); s != "" {
			asst.Content.OfString = openai.String(s)
		}
		if len(t.calls) == 0 {
			// The final reply joins the history, so a follow-up user
			// message continues after it.
			asst.Content.OfString = openai.String(t.text.String())
			ch.messages = append(ch.messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
			return res, nil
		}
		for i, call := range t.calls {
			if call.id == "" {
				// Some local servers omit ids; the pair and the reply
				// still need one to correlate.
				call.id = fmt.Sprintf("call_%d_%d", n, i)
			}
			asst.ToolCalls = append(asst.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       call.id,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: call.name, Arguments: call.args.String()},
				},
			})
		}
		ch.messages = append(ch.messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
		for i, call := range t.calls {
			if cerr := ctx.Err(); cerr != nil {
				// Calls the model asked for but reel never ran still get
				// their pair, closed as dangling.
				if err := closeUnrun(emit, t.calls[i:], cerr); err != nil {
					return fail(err)
				}
				return fail(cerr)
			}
			out, err := ch.router.Call(ctx, call.name, call.id, json.RawMessage(call.args.String()))
			if errors.Is(err, tools.ErrRecord) {
				return fail(err)
			}
			ch.messages = append(ch.messages, openai.ToolMessage(tools.Answer(out, err), call.id))
		}
	}
}

// stream sends one request and accumulates the streamed response. The turn
// holds whatever arrived even when err is set.
func (c *openAIConfig) stream(ctx context.Context, svc openai.ChatCompletionService, messages []openai.ChatCompletionMessageParamUnion) (*turn, error) {
	t := &turn{}
	s := svc.NewStreaming(ctx, c.params(messages))
	defer s.Close()
	for s.Next() {
		t.add(s.Current())
	}
	if err := s.Err(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return t, fmt.Errorf("%w (POST %s/chat/completions)", cerr, c.baseURL)
		}
		return t, fmt.Errorf("POST %s/chat/completions: %w", c.baseURL, describeAPIError(err))
	}
	if err := ctx.Err(); err != nil {
		return t, err
	}
	if t.finish == "" {
		// A stream cut before the model finished must not pass for a
		// complete answer.
		return t, fmt.Errorf("POST %s/chat/completions: stream ended before the model finished (no finish_reason)", c.baseURL)
	}
	return t, nil
}

func closeUnrun(emit Emit, calls []*toolCall, reason error) error {
	for _, c := range calls {
		in := toolInput(c.args.String())
		for _, typ := range []transcript.EventType{transcript.ToolCall, transcript.ToolResult} {
			p := &transcript.ToolPayload{Name: c.name, CallID: c.id, Input: in, Fidelity: transcript.FidelityRouter}
			if typ == transcript.ToolResult {
				p.Error = "no result: " + reason.Error()
			}
			if err := emit(transcript.ExchangeEvent{Type: typ, Timestamp: time.Now(), Payload: p}); err != nil {
				return fmt.Errorf("record %s: %w", typ, err)
			}
		}
	}
	return nil
}
