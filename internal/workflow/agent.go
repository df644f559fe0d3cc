package workflow

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"gopkg.in/yaml.v3"
)

// Providers lists the agent providers a workflow may name.
var Providers = []string{"claude", "codex", "gemini", "github_copilot", "mistral_vibe", "opencode", "openai_compatible", "anthropic"}

// Agent modes.
const (
	ModeSingle       = "single"
	ModeConversation = "conversation"
)

// DefaultMaxTurns bounds a mode: conversation step that has a
// stop_condition but no max_turns (AWF's default).
const DefaultMaxTurns = 10

// AgentSpec is what an agent state sets besides provider, prompt, system
// prompt and options, in AWF's syntax.
type AgentSpec struct {
	// Mode is ModeSingle (the default) or ModeConversation.
	Mode string
	// Session is the mapping form of conversation: the step's session is
	// tracked (another step may continue it), and in mode conversation it
	// bounds and feeds the turns. Nil without it.
	Session *ConversationSpec
	// ProviderTemplate is set when provider is a template, resolved at run
	// time; State.Provider then holds its source.
	ProviderTemplate *Template
	// Skills are rendered ahead of the prompt, in order.
	Skills []SkillRef
	// Role names the role whose AGENTS.md leads the system prompt; it may
	// be a template.
	Role *Template
}

// SkillRef is one entry of skills: a name looked up in the skill
// directories, or a directory path relative to the workflow file.
type SkillRef struct {
	Name string
	Path string
	Pos  Pos
}

// ConversationSpec is an agent state's conversation mapping.
type ConversationSpec struct {
	Pos Pos
	// ContinueFrom names the agent state whose session this step resumes
	// (its latest execution in the run).
	ContinueFrom string
	ContinuePos  Pos
	// MaxTurns bounds the turns of a mode conversation step; 0 is unset.
	MaxTurns int
	// StopCondition ends a mode conversation step when true after a reply.
	// Its variables are those of when expressions plus turn (Output, JSON,
	// Number, TotalTokens of the reply just received) and, as AWF spelled
	// them, inputs.response, inputs.turn_count and inputs.total_tokens.
	StopCondition *Expr
	// InjectContext is appended to every user message after the first.
	InjectContext *Template
}

// Tracked reports whether the state keeps a session another step may
// continue: any conversation, list or mapping, or mode conversation.
func (s *State) Tracked() bool {
	return s.Type == TypeAgent && (len(s.Conversation) > 0 || s.Agent != nil && (s.Agent.Session != nil || s.Agent.Mode == ModeConversation))
}

func (s *State) agent() *AgentSpec {
	if s.Agent == nil {
		s.Agent = &AgentSpec{}
	}
	return s.Agent
}

// agentFields are the agent fields parsed here, besides the core ones.
var agentFields = []string{"mode", "skills", "role", "model", "max_tokens"}

// agentField parses one of agentFields into s.
func (l *loader) agentField(s *State, key string, v *yaml.Node) {
	a := s.agent()
	switch key {
	case "mode":
		if m, ok := l.str(v, "mode"); ok && l.oneOf(v, "mode", m, []string{ModeSingle, ModeConversation}) {
			a.Mode = m
		}
	case "skills":
		a.Skills = l.skills(v)
	case "role":
		if t := l.template(v, "role"); t != nil {
			if strings.TrimSpace(t.Source) == "" {
				l.errf(v, "role is empty")
			} else {
				a.Role = t
			}
		}
	case "model":
		// AWF ignores a step-level model; reel reads it as options.model.
		if m, ok := l.str(v, "model"); ok {
			l.shorthand(s, v, "model", m)
		}
	case "max_tokens":
		if n, ok := l.intv(v, "max_tokens"); ok {
			if n < 1 {
				l.errf(v, "max_tokens must be at least 1, got %d", n)
			}
			l.shorthand(s, v, "max_tokens", n)
		}
	}
}

// shorthand stores a step-level field as the option of the same name,
// which must not say otherwise. It runs after options whatever the field
// order, because options is merged in finishAgent.
func (l *loader) shorthand(s *State, v *yaml.Node, key string, val any) {
	if s.shorthands == nil {
		s.shorthands = map[string]shorthandValue{}
	}
	s.shorthands[key] = shorthandValue{val, pos(v)}
}

type shorthandValue struct {
	val any
	pos Pos
}

func (l *loader) skills(n *yaml.Node) []SkillRef {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "skills must be a list of skill names or {path: DIR} entries, got %s", kindName(n))
		return nil
	}
	var out []SkillRef
	for i, c := range n.Content {
		c = deref(c)
		what := fmt.Sprintf("skills[%d]", i)
		switch c.Kind {
		case yaml.ScalarNode:
			name, ok := l.str(c, what)
			if !ok {
				continue
			}
			if strings.TrimSpace(name) == "" {
				l.errf(c, "%s is empty", what)
				continue
			}
			if strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") {
				l.errf(c, "%s: %q is a path; write it as {path: %s}", what, name, name)
				continue
			}
			out = append(out, SkillRef{Name: name, Pos: pos(c)})
		case yaml.MappingNode:
			fs, _ := l.mapping(c, what)
			var ref SkillRef
			for _, f := range fs {
				if f.key.Value != "path" {
					l.unknownField(f.key, what, []string{"path"}, "")
					continue
				}
				if p, ok := l.str(f.val, what+".path"); ok {
					if strings.TrimSpace(p) == "" {
						l.errf(f.val, "%s.path is empty", what)
						continue
					}
					ref = SkillRef{Path: p, Pos: pos(f.val)}
				}
			}
			if ref.Path == "" && len(fs) > 0 {
				continue
			}
			if ref.Path == "" {
				l.errf(c, "%s needs path", what)
				continue
			}
			out = append(out, ref)
		default:
			l.errf(c, "%s must be a skill name or {path: DIR}, got %s", what, kindName(c))
		}
	}
	return out
}

// conversationFields are the keys of the conversation mapping.
var conversationFields = []string{"continue_from", "max_turns", "stop_condition", "inject_context"}

// conversationMapping reads AWF's conversation mapping into s.
func (l *loader) conversationMapping(s *State, n *yaml.Node) {
	c := &ConversationSpec{Pos: pos(n)}
	s.agent().Session = c
	fs, _ := l.mapping(n, "conversation")
	for _, f := range fs {
		k, v := f.key, f.val
		switch k.Value {
		case "continue_from":
			if name, ok := l.str(v, "conversation.continue_from"); ok {
				c.ContinueFrom, c.ContinuePos = name, pos(v)
			}
		case "max_turns":
			if x, ok := l.intv(v, "conversation.max_turns"); ok {
				if x < 1 || x > MaxMaxIterations {
					l.errf(v, "conversation.max_turns must be between 1 and %d, got %d", MaxMaxIterations, x)
				}
				c.MaxTurns = x
			}
		case "stop_condition":
			c.StopCondition = l.stopCondition(v)
		case "inject_context":
			c.InjectContext = l.template(v, "conversation.inject_context")
		case "strategy", "max_context_tokens":
			l.errf(k, "conversation.%s is not supported: AWF removed it (F083) and reel never trims a conversation; remove it", k.Value)
		default:
			l.unknownField(k, "conversation", conversationFields, "")
		}
	}
}

// stopEnvShape declares stop_condition's variables: those of the other
// expressions plus turn.
func stopEnvShape() map[string]any {
	shape := maps.Clone(exprEnvShape)
	shape["turn"] = map[string]any{}
	return shape
}

func (l *loader) stopCondition(n *yaml.Node) *Expr {
	src, ok := l.str(n, "conversation.stop_condition")
	if !ok {
		return nil
	}
	if strings.TrimSpace(src) == "" {
		l.errf(n, "conversation.stop_condition is empty")
		return nil
	}
	prog, err := expr.Compile(src, expr.Env(stopEnvShape()), expr.AsBool())
	if err != nil {
		l.errf(n, "conversation.stop_condition: bad expression: %s", firstLine(err.Error()))
		return nil
	}
	return &Expr{Source: src, Pos: pos(n), prog: prog}
}

// finishAgent completes an agent state once all its fields are read:
// provider (or its template), step-level shorthands merged into options,
// options.system_prompt, and the rules that tie fields together.
func (l *loader) finishAgent(k *yaml.Node, s *State) {
	if s.Provider == "" {
		l.errf(k, "agent %q is missing provider", s.Name)
	} else if strings.Contains(s.Provider, "{{") {
		t, err := l.parseTemplate(s.Provider, s.Pos)
		if err != nil {
			l.errf(k, "agent %q: provider: bad template: %v", s.Name, cleanTemplateErr(err))
		} else {
			s.agent().ProviderTemplate = t
		}
	} else if s.Provider == "custom" {
		l.errf(k, "agent %q: provider custom was replaced by openai_compatible (base_url, model) in AWF 0.5; reel has only the latter", s.Name)
	} else if !contains(Providers, s.Provider) {
		msg := fmt.Sprintf("agent %q: unknown provider %q (one of %s)", s.Name, s.Provider, strings.Join(Providers, ", "))
		msg += didYouMean(s.Provider, Providers)
		l.errf(k, "%s", msg)
	}
	for _, key := range []string{"model", "max_tokens"} {
		sh, ok := s.shorthands[key]
		if !ok {
			continue
		}
		if old, set := s.Options[key]; set && literal(old) != fmt.Sprint(sh.val) {
			shown := literal(old)
			if t, ok := old.(*Template); ok {
				shown = t.Source
			}
			l.errAt(sh.pos, "%s %v contradicts options.%s %s; set it once", key, sh.val, key, shown)
			continue
		}
		if s.Options == nil {
			s.Options = map[string]any{}
		}
		s.Options[key] = sh.val
	}
	s.shorthands = nil
	if sp, ok := s.Options["system_prompt"]; ok {
		// AWF's openai_compatible and copilot read a system prompt from
		// options too; reel has one place for it.
		switch {
		case s.SystemPrompt != nil:
			l.errAt(s.Pos, "agent %q sets both system_prompt and options.system_prompt; keep one", s.Name)
		default:
			if t, ok := sp.(*Template); ok {
				s.SystemPrompt = t
			} else {
				l.errAt(s.Pos, "agent %q: options.system_prompt must be a string", s.Name)
			}
		}
		delete(s.Options, "system_prompt")
	}
	if l.opts.AgentOptions != nil && s.Agent.providerStatic(s.Provider) {
		if err := l.opts.AgentOptions(s.Provider, staticOptions(s.Options)); err != nil {
			l.errAt(s.Pos, "agent %q: %v", s.Name, err)
		}
	}
	a := s.Agent
	if a == nil {
		return
	}
	mode := a.Mode
	if mode == "" {
		mode = ModeSingle
	}
	if mode == ModeConversation && len(s.Conversation) > 0 {
		l.errAt(s.Pos, "agent %q: mode conversation takes its turns from the terminal, a conversation list scripts them; use one", s.Name)
	}
	if c := a.Session; c != nil && mode == ModeSingle {
		if c.MaxTurns > 0 || c.StopCondition != nil || c.InjectContext != nil {
			l.errAt(c.Pos, "agent %q: conversation.max_turns, stop_condition and inject_context apply to mode: conversation (a single-mode step runs one turn)", s.Name)
		}
	}
}

// providerStatic reports whether the provider is known at load time.
func (a *AgentSpec) providerStatic(provider string) bool {
	return (a == nil || a.ProviderTemplate == nil) && contains(Providers, provider)
}

// staticOptions returns options with their literal strings as strings and
// the entries that hold template actions (known only at run time) left
// out.
func staticOptions(opts map[string]any) map[string]any {
	var conv func(v any) (any, bool)
	conv = func(v any) (any, bool) {
		switch v := v.(type) {
		case *Template:
			if v.tmpl != nil {
				return nil, false
			}
			return v.Source, true
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, x := range v {
				if y, ok := conv(x); ok {
					m[k] = y
				}
			}
			return m, true
		case []any:
			out := make([]any, 0, len(v))
			for _, x := range v {
				y, ok := conv(x)
				if !ok {
					return nil, false
				}
				out = append(out, y)
			}
			return out, true
		}
		return v, true
	}
	m, _ := conv(opts)
	out, _ := m.(map[string]any)
	return out
}

// RenderOptions renders an agent state's options for one execution: every
// string is a template, rendered against data.
func RenderOptions(opts map[string]any, data map[string]any) (map[string]any, error) {
	var render func(path string, v any) (any, error)
	render = func(path string, v any) (any, error) {
		switch v := v.(type) {
		case *Template:
			s, err := v.Execute(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return s, nil
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, x := range v {
				y, err := render(path+"."+k, x)
				if err != nil {
					return nil, err
				}
				m[k] = y
			}
			return m, nil
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				y, err := render(fmt.Sprintf("%s[%d]", path, i), x)
				if err != nil {
					return nil, err
				}
				out[i] = y
			}
			return out, nil
		}
		return v, nil
	}
	if opts == nil {
		return nil, nil
	}
	m, err := render("options", opts)
	if err != nil {
		return nil, err
	}
	return m.(map[string]any), nil
}

// validateAgent checks what an agent state refers to: the state it
// continues, its skills and its role.
func (l *loader) validateAgent(wf *Workflow, s *State) {
	a := s.Agent
	if s.Type != TypeAgent || a == nil {
		return
	}
	if c := a.Session; c != nil && c.ContinueFrom != "" {
		what := fmt.Sprintf("state %q conversation.continue_from", s.Name)
		t, ok := wf.States[c.ContinueFrom]
		switch {
		case !ok:
			l.missingStateAt(c.ContinuePos, what, c.ContinueFrom, wf)
		case t.Type != TypeAgent:
			l.errAt(c.ContinuePos, "%s: %q is a %s state; only an agent state has a session to continue", what, t.Name, t.Type)
		case !t.Tracked():
			l.errAt(c.ContinuePos, "%s: agent %q does not track its session; give it conversation: {} (or a conversation)", what, t.Name)
		case a.providerStatic(s.Provider) && t.Agent.providerStatic(t.Provider) && t.Provider != s.Provider:
			l.errAt(c.ContinuePos, "%s: %q runs provider %s and this state %s; a session cannot move between providers", what, t.Name, t.Provider, s.Provider)
		}
	}
	f := l.opts.AgentFiles
	if f == nil {
		return
	}
	base := ""
	if wf.File != "" {
		base = filepath.Dir(wf.File)
	}
	for _, ref := range a.Skills {
		var err error
		if ref.Path != "" {
			_, err = f.SkillAt(ref.Path, base)
		} else {
			_, err = f.Skill(ref.Name)
		}
		if err != nil {
			l.errAt(ref.Pos, "state %q: %v", s.Name, err)
		}
	}
	if r := a.Role; r != nil && r.tmpl == nil {
		if _, err := f.Role(r.Source, base); err != nil {
			l.errAt(r.Pos, "state %q: %v", s.Name, err)
		}
	}
}

// agentTemplates lists the templates of an agent state's AWF fields and
// its options, for reference checks.
func (s *State) agentTemplates() []*Template {
	var out []*Template
	if a := s.Agent; a != nil {
		out = append(out, a.ProviderTemplate, a.Role)
		if a.Session != nil {
			out = append(out, a.Session.InjectContext)
		}
	}
	walkTemplates(s.Options, func(t *Template) { out = append(out, t) })
	return out
}

// walkTemplates calls fn for each *Template leaf of v.
func walkTemplates(v any, fn func(*Template)) {
	switch v := v.(type) {
	case *Template:
		fn(v)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			walkTemplates(v[k], fn)
		}
	case []any:
		for _, x := range v {
			walkTemplates(x, fn)
		}
	}
}
