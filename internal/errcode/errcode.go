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
	"fmt"
	"sort"
	"strings"

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

var catalog = []Entry{
	{UserInputMissingFile, "A file or workflow the command names does not exist where it was looked for (the message lists the places).",
		"Check the name or path for a typo; `reel list` shows the workflows reel finds here, `reel config show` where it looks.",
		[]Code{UserInputInvalidFormat, SystemIOReadFailed}},
	{UserInputInvalidFormat, "A file or value given to the command is not in the shape it must have.",
		"Compare it with the documented format; for a workflow, `reel validate` points at the line.",
		[]Code{WorkflowParseYAMLSyntax, UserInputValidationFailed}},
	{UserInputValidationFailed, "An input, flag or argument was missing or did not pass its checks (type, enum, pattern, bounds, a reserved name).",
		"Give every required input with --input NAME=VALUE (`reel run NAME --help` lists them) and a value the workflow accepts.",
		[]Code{UserInputMissingFile, UserInputInvalidFormat}},
	{WorkflowParseYAMLSyntax, "The workflow file is not valid YAML.",
		"Fix the line the message names: indent with spaces, put a space after each colon, start list items with \"- \".",
		[]Code{WorkflowParseUnknownField, UserInputInvalidFormat}},
	{WorkflowParseUnknownField, "The workflow has a key the workflow language does not define, usually a misspelt one.",
		"Use the key the message suggests; docs/workflow-syntax.md lists every field.",
		[]Code{WorkflowParseYAMLSyntax}},
	{WorkflowValidationCycleDetected, "Workflows call each other in a cycle, so the run could never end.",
		"Break the cycle: one of the call_workflow states the message lists must call something else.",
		[]Code{WorkflowValidationInvalidTransition, WorkflowValidationMissingState}},
	{WorkflowValidationMissingState, "A transition, branch or initial names a state the workflow does not have.",
		"Define the state, or name an existing one (the message suggests the closest).",
		[]Code{WorkflowValidationCycleDetected, WorkflowValidationInvalidTransition}},
	{WorkflowValidationInvalidTransition, "A transition cannot be taken as written (a bad condition, or a state that can never be reached).",
		"Fix the condition or the target the message names; `reel diagram` draws the flow.",
		[]Code{WorkflowValidationMissingState, WorkflowValidationCycleDetected}},
	{WorkflowValidationFailed, "The workflow breaks a rule of the workflow language; each problem is printed as file:line:col. (reel's code: AWF has none for these.)",
		"Fix each problem listed; `reel validate FILE` lists them again, with --strict also the warnings.",
		[]Code{WorkflowParseYAMLSyntax, WorkflowValidationMissingState}},
	{ExecutionCommandFailed, "A step's command exited with a status other than 0 and nothing handled the failure.",
		"Read the step's stderr (`reel status RUN`, `reel replay RUN`); add on_failure, retry or continue_on_error where a failure is expected.",
		[]Code{ExecutionCommandTimeout, SystemIOPermissionDenied}},
	{ExecutionCommandTimeout, "A step ran longer than its timeout and was stopped.",
		"Raise the step's timeout, or make the command finish sooner.",
		[]Code{ExecutionCommandFailed}},
	{ExecutionParallelPartialFailure, "Some branches of a parallel state failed under a strategy that needs them to succeed.",
		"Look at the failed branches; best_effort waits for every branch, any_succeed needs one.",
		[]Code{ExecutionCommandFailed, ExecutionCommandTimeout}},
	{ExecutionPluginDisabled, "A step uses a plugin that is disabled.",
		"Enable the plugin, or remove the step that uses it.",
		nil},
	{SystemIOReadFailed, "A file could not be read.",
		"Check that the file exists and is readable by this user.",
		[]Code{SystemIOPermissionDenied, UserInputMissingFile}},
	{SystemIOWriteFailed, "A file could not be written (the storage, a transcript, an installed pack).",
		"Check the free space and that the directory is writable (`reel config show` names the storage).",
		[]Code{SystemIOPermissionDenied}},
	{SystemIOPermissionDenied, "The operating system refused access to a file or directory.",
		"Check the file's owner and mode, or run as a user allowed to access it.",
		[]Code{SystemIOReadFailed, SystemIOWriteFailed}},
}

// Lookup returns the catalog's entry for code.
func Lookup(code Code) (Entry, bool) {
	for _, e := range catalog {
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
	for _, e := range catalog {
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
