package workflow

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"text/template"

	"github.com/reelhq/reel/internal/awfhome"
)

// The namespaces templates and expressions read, as AWF defines them. A
// template names them with a leading dot ({{.inputs.x}}) or without one
// ({{inputs.x}}, AWF's registered form); an expression names them bare
// (inputs.x). The engine builds the data with these keys (one map per
// evaluation); the loader checks every reference against the tables below.
const (
	NSInputs   = "inputs"
	NSStates   = "states"
	NSWorkflow = "workflow"
	NSEnv      = "env"
	NSContext  = "context"
	NSError    = "error"
	NSLoop     = "loop"
	NSAWF      = "awf"
	// NSTurn is reel's: the previous reply inside a conversation follow-up.
	NSTurn = "turn"
)

// Namespaces lists every namespace a template may read.
var Namespaces = []string{NSInputs, NSStates, NSWorkflow, NSEnv, NSContext, NSError, NSLoop, NSAWF, NSTurn}

// Properties of each namespace whose keys are fixed. AWF's names are
// PascalCase; a lowercase spelling is refused with the right one suggested
// (see lowercaseProps).
var (
	// StateProps are the properties of .states.NAME. Error and Data are
	// reel's additions (the failure message, and the structured result of
	// loops, parallel blocks, calls and custom steps); Conversation is a
	// conversation step's summary, as in AWF.
	StateProps = []string{"Output", "Stderr", "ExitCode", "Status", "Error", "Response", "JSON", "Data",
		"TokensUsed", "TokensInput", "TokensOutput", "TokensEstimated", "Conversation"}
	WorkflowProps = []string{"ID", "Name", "CurrentState", "StartedAt", "Duration"}
	ContextProps  = []string{"WorkingDir", "User", "Hostname"}
	ErrorProps    = []string{"Message", "State", "ExitCode", "Type"}
	LoopProps     = []string{"Item", "Index", "Index1", "First", "Last", "Length", "Parent"}
	// AWFDirs are the keys of .awf: AWF's directories under the XDG base
	// directories, and the name of a pack's workflow's pack
	// (awfhome.Dirs.Namespace).
	AWFDirs = awfhome.Keys
)

// lowercaseProps maps the spellings AWF users try to the property AWF
// accepts, for "use X instead" messages.
var lowercaseProps = map[string]string{
	"output": "Output", "stderr": "Stderr", "exit_code": "ExitCode", "exitcode": "ExitCode", "status": "Status",
	"error": "Error", "response": "Response", "json": "JSON", "data": "Data", "tokens": "TokensUsed",
	"tokensused": "TokensUsed", "tokens_used": "TokensUsed", "tokensinput": "TokensInput", "tokens_input": "TokensInput",
	"tokensoutput": "TokensOutput", "tokens_output": "TokensOutput", "tokensestimated": "TokensEstimated", "conversation": "Conversation",
	"id": "ID", "run_id": "ID", "name": "Name", "current_state": "CurrentState", "started_at": "StartedAt", "duration": "Duration",
	"working_dir": "WorkingDir", "workingdir": "WorkingDir", "user": "User", "hostname": "Hostname",
	"message": "Message", "state": "State", "type": "Type",
	"item": "Item", "index": "Index", "index1": "Index1", "first": "First", "last": "Last", "length": "Length", "parent": "Parent",
}

// Step statuses as .states.NAME.Status gives them (AWF's values).
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// ErrorValue builds the .error namespace of an error hook.
func ErrorValue(message, state string, exitCode int, typ string) map[string]any {
	return map[string]any{"Message": message, "State": state, "ExitCode": exitCode, "Type": typ}
}

// JSONObject and JSONArray hold parsed JSON (step output, loop items, array
// inputs) in template data. They index like any map or slice
// ({{.loop.Item.name}}, {{range ...}}), and print as JSON rather than Go's
// map[...] form, so that a value passed on to a shell command or a child
// workflow is still JSON.
type (
	JSONObject map[string]any
	JSONArray  []any
)

func (o JSONObject) String() string { return marshalJSON(map[string]any(o)) }
func (a JSONArray) String() string  { return marshalJSON([]any(a)) }

// marshalJSON encodes v as encoding/json does; AWF renders loop items the
// same way, HTML escapes included.
func marshalJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// TemplateValue converts parsed JSON (maps and slices, at any depth) into
// JSONObject and JSONArray so that templates print it as JSON. Other
// values are returned unchanged. Expressions get the raw values.
func TemplateValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		o := make(JSONObject, len(v))
		for k, x := range v {
			o[k] = TemplateValue(x)
		}
		return o
	case []any:
		a := make(JSONArray, len(v))
		for i, x := range v {
			a[i] = TemplateValue(x)
		}
		return a
	case []string:
		a := make(JSONArray, len(v))
		for i, x := range v {
			a[i] = x
		}
		return a
	}
	return v
}

// LoopItem is the template view of a loop item: objects and arrays print
// as JSON, strings unquoted, numbers in plain decimal notation (42, 3.14,
// never 1e+21) and booleans as true/false, which is how AWF renders
// {{.loop.Item}}. A while loop has no item; it prints as null.
func LoopItem(v any) any {
	switch x := v.(type) {
	case nil:
		return jsonNull{}
	case float64:
		return plainNumber(x)
	case float32:
		return plainNumber(float64(x))
	}
	return TemplateValue(v)
}

type plainNumber float64

func (n plainNumber) String() string { return strconv.FormatFloat(float64(n), 'f', -1, 64) }

type jsonNull struct{}

func (jsonNull) String() string               { return "null" }
func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// maxReadFile bounds readFile, as AWF does (1 MiB).
const maxReadFile = 1 << 20

// templateFuncs are the functions every template may call: AWF's (escape,
// json, split, join, readFile, trimSpace) and reel's (trim, upper, lower,
// replace, toJSON, default).
var templateFuncs = template.FuncMap{
	"escape":    shellEscape,
	"json":      toJSON,
	"toJSON":    toJSON,
	"split":     split,
	"join":      join,
	"readFile":  readFile,
	"trimSpace": func(s any) string { return strings.TrimSpace(text(s)) },
	"trim":      func(s any) string { return strings.TrimSpace(text(s)) },
	"upper":     func(s any) string { return strings.ToUpper(text(s)) },
	"lower":     func(s any) string { return strings.ToLower(text(s)) },
	"replace":   func(s any, old, new string) string { return strings.ReplaceAll(text(s), old, new) },
	"default": func(def, v any) any {
		if v == nil || v == "" {
			return def
		}
		return v
	},
}

// text is the printed form of a template value.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// shellEscape quotes s for a POSIX shell when it holds any character the
// shell would interpret; ” for the empty string.
func shellEscape(v any) string {
	s := text(v)
	if s == "" {
		return "''"
	}
	if !strings.ContainsAny(s, " \t\n\"'\\$`!*?[](){}<>|&;") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("json: %w", err)
	}
	return string(b), nil
}

// split cuts s at every sep and trims each part, as AWF's split does.
func split(s any, sep string) []string {
	parts := strings.Split(text(s), sep)
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// join joins the elements of any list (split's result, a JSON array, an
// array input) with sep.
func join(list any, sep string) (string, error) {
	if s, ok := list.([]string); ok {
		return strings.Join(s, sep), nil
	}
	v := reflect.ValueOf(list)
	if !v.IsValid() {
		return "", nil
	}
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = text(v.Index(i).Interface())
	}
	return strings.Join(parts, sep), nil
}

// readFile returns a file's content, refusing directories and files over
// 1 MiB. A relative path is taken from the working directory, as AWF does.
func readFile(path any) (string, error) {
	p := text(path)
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("readFile %q: %w", p, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("readFile %q: is a directory", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("readFile %q: %w", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxReadFile+1))
	if err != nil {
		return "", fmt.Errorf("readFile %q: %w", p, err)
	}
	if len(b) > maxReadFile {
		return "", fmt.Errorf("readFile %q: larger than the %d byte limit", p, maxReadFile)
	}
	return string(b), nil
}
