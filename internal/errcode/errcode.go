// Package errcode gives reel's errors AWF's error codes: a name of three
// parts, CATEGORY.SUBCATEGORY.SPECIFIC, that a script can switch on
// whatever the message says, and whose category is the exit status
// (USER 1, WORKFLOW 2, EXECUTION 3, SYSTEM 4; package exitcode). The codes
// are AWF's, so that a script reading `awf … --format json` errors reads
// reel's the same way; reel adds one, WORKFLOW.VALIDATION.FAILED, for an
// invalid workflow whose problem AWF's codes do not name. The catalog
// `reel error` prints says what each code means and what to do, in
// reel's words.
package errcode

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/reelhq/reel/internal/exitcode"
)

// Code is an error code.
type Code string

// Codes.
const (
	UserInputMissingFile      Code = "USER.INPUT.MISSING_FILE"
	UserInputInvalidFormat    Code = "USER.INPUT.INVALID_FORMAT"
	UserInputValidationFailed Code = "USER.INPUT.VALIDATION_FAILED"

	WorkflowParseYAMLSyntax             Code = "WORKFLOW.PARSE.YAML_SYNTAX"
	WorkflowParseUnknownField           Code = "WORKFLOW.PARSE.UNKNOWN_FIELD"
	WorkflowValidationCycleDetected     Code = "WORKFLOW.VALIDATION.CYCLE_DETECTED"
	WorkflowValidationMissingState      Code = "WORKFLOW.VALIDATION.MISSING_STATE"
	WorkflowValidationInvalidTransition Code = "WORKFLOW.VALIDATION.INVALID_TRANSITION"
	// WorkflowValidationFailed is reel's: any other rule an invalid
	// workflow breaks.
	WorkflowValidationFailed Code = "WORKFLOW.VALIDATION.FAILED"

	ExecutionCommandFailed          Code = "EXECUTION.COMMAND.FAILED"
	ExecutionCommandTimeout         Code = "EXECUTION.COMMAND.TIMEOUT"
	ExecutionParallelPartialFailure Code = "EXECUTION.PARALLEL.PARTIAL_FAILURE"
	ExecutionPluginDisabled         Code = "EXECUTION.PLUGIN.DISABLED"

	SystemIOReadFailed       Code = "SYSTEM.IO.READ_FAILED"
	SystemIOWriteFailed      Code = "SYSTEM.IO.WRITE_FAILED"
	SystemIOPermissionDenied Code = "SYSTEM.IO.PERMISSION_DENIED"
)

// Category is the code's first part: USER, WORKFLOW, EXECUTION or SYSTEM.
func (c Code) Category() string {
	cat, _, _ := strings.Cut(string(c), ".")
	return cat
}

// ExitCode is the exit status the code's category means.
func (c Code) ExitCode() int {
	switch c.Category() {
	case "WORKFLOW":
		return exitcode.Workflow
	case "EXECUTION":
		return exitcode.Execution
	case "SYSTEM":
		return exitcode.System
	}
	return exitcode.User
}

// Entry is what the catalog says about a code.
type Entry struct {
	Code        Code   `json:"code"`
	Description string `json:"description"`
	Resolution  string `json:"resolution"`
	Related     []Code `json:"related_codes,omitempty"`
}

// catalogText is what `reel error` prints about each code: prose, kept in
// a Markdown file of its own rather than in Go literals.
//
//go:embed catalog.md
var catalogText string

// catalog is catalogText parsed, at first use. The embedded file is part
// of the program, so a malformed one is a bug the tests catch, not an
// error a user could act on.
var catalog = sync.OnceValue(func() []Entry {
	entries, err := parseCatalog(catalogText)
	if err != nil {
		panic("errcode: catalog.md: " + err.Error())
	}
	return entries
})

// parseCatalog reads the catalog's sections: "## CODE", a one-line
// description, "Resolution: …" and an optional "Related: A, B". Text
// before the first section is the file's own introduction.
func parseCatalog(text string) ([]Entry, error) {
	var out []Entry
	for i, line := range strings.Split(text, "\n") {
		if code, ok := strings.CutPrefix(line, "## "); ok {
			out = append(out, Entry{Code: Code(code)})
			continue
		}
		if line == "" || len(out) == 0 {
			continue
		}
		e := &out[len(out)-1]
		resolution, isResolution := strings.CutPrefix(line, "Resolution: ")
		related, isRelated := strings.CutPrefix(line, "Related: ")
		switch {
		case isResolution && e.Resolution == "":
			e.Resolution = resolution
		case isRelated && e.Related == nil:
			for _, c := range strings.Split(related, ", ") {
				e.Related = append(e.Related, Code(c))
			}
		case !isResolution && !isRelated && e.Description == "" && e.Resolution == "":
			e.Description = line
		default:
			return nil, fmt.Errorf("line %d, in %s: %q is out of place (a section has one description, one Resolution: line, at most one Related: line)", i+1, e.Code, line)
		}
	}
	for _, e := range out {
		if e.Description == "" || e.Resolution == "" {
			return nil, fmt.Errorf("%s has no description or no resolution", e.Code)
		}
	}
	return out, nil
}

// Lookup returns the catalog's entry for code.
func Lookup(code Code) (Entry, bool) {
	for _, e := range catalog() {
		if e.Code == code {
			return e, true
		}
	}
	return Entry{}, false
}

// Search returns the entries whose code is query or starts with it (a
// category, USER, or a subcategory, WORKFLOW.VALIDATION), in code order;
// an empty query returns them all. Case does not matter.
func Search(query string) []Entry {
	query = strings.ToUpper(strings.TrimSpace(query))
	var out []Entry
	for _, e := range catalog() {
		c := string(e.Code)
		if strings.HasPrefix(c, query) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Error is an error with its code, the details that locate it and the
// hints that help, as commands print it:
//
//	[USER.INPUT.MISSING_FILE] workflow not found: deploy
//	  Details:
//	    path: deploy
//	  Hint: reel list shows the workflows reel finds here
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Hints   []string
	// Err is the cause, for errors.Is and errors.As.
	Err error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Wrap gives err a code and hints; the message is err's.
func Wrap(code Code, err error, details map[string]any, hints ...string) *Error {
	return &Error{Code: code, Message: err.Error(), Details: details, Hints: hints, Err: err}
}

// Text is the error as a terminal shows it, without its hints when
// hints is false.
func (e *Error) Text(hints bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", e.Code, e.Message)
	if len(e.Details) > 0 {
		b.WriteString("\n  Details:")
		keys := make([]string, 0, len(e.Details))
		for k := range e.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "\n    %s: %v", k, e.Details[k])
		}
	}
	if hints {
		for _, h := range e.Hints {
			fmt.Fprintf(&b, "\n  Hint: %s", h)
		}
	}
	return b.String()
}

// JSON is the error as `--format json` prints it: AWF's error, code
// (the exit status) and error_code, with reel's details and hints.
type JSON struct {
	Error     string         `json:"error"`
	Code      int            `json:"code"`
	ErrorCode Code           `json:"error_code,omitempty"`
	Details   map[string]any `json:"details,omitempty"`
	Hints     []string       `json:"hints,omitempty"`
}
