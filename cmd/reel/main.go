// Command reel runs AI-agent workflows and records every run as a canonical
// agent exchange transcript.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/errcode"
	"github.com/reelhq/reel/internal/workflow"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd, err := newRootCmd().ExecuteContextC(ctx)
	stop()
	if err == nil && cmd != nil {
		if code, ok := cmd.Annotations[helpExit]; ok {
			n, _ := strconv.Atoi(code)
			os.Exit(n)
		}
	}
	if err != nil {
		os.Exit(reportError(os.Stderr, cmd, err))
	}
}

// reportError prints the error a command returned on w and returns the
// exit status: an AWF-coded error as AWF prints it ([CODE] message,
// details, hints), as a JSON object when the command was asked for JSON
// (--json, --format json); any other as "reel: message".
func reportError(w io.Writer, cmd *cobra.Command, err error) int {
	code, msg := exitStatus(err)
	hints := true
	if cmd != nil {
		if f := cmd.Flag(noHintsFlag); f != nil && f.Value.String() == "true" {
			hints = false
		}
	}
	var ce *errcode.Error
	if errors.As(err, &ce) {
		if !hints {
			ce.Message = workflow.StripHints(ce.Message)
		}
		if wantsJSON(cmd) {
			j := errcode.JSON{Error: ce.Message, Code: code, ErrorCode: ce.Code, Details: ce.Details}
			if hints {
				j.Hints = ce.Hints
			}
			b, _ := json.MarshalIndent(j, "", "  ")
			fmt.Fprintf(w, "%s\n", b)
			return code
		}
		fmt.Fprintln(w, "reel:", ce.Text(hints))
		return code
	}
	if msg != "" && cmd != nil {
		msg = hintsOff(cmd)(msg)
	}
	if msg != "" {
		if wantsJSON(cmd) {
			b, _ := json.MarshalIndent(errcode.JSON{Error: msg, Code: code}, "", "  ")
			fmt.Fprintf(w, "%s\n", b)
			return code
		}
		fmt.Fprintln(w, "reel:", msg)
	}
	return code
}

// wantsJSON reports whether cmd was asked for JSON output.
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	if f := cmd.Flags().Lookup("json"); f != nil && f.Value.String() == "true" {
		return true
	}
	f := cmd.Flags().Lookup("format")
	return f != nil && f.Value.String() == "json"
}

// exitStatus is the exit status and the message main gives the error a
// command returned: 0 for none, an *exitError's own, or 2 and the error's
// text.
func exitStatus(err error) (code int, msg string) {
	if err == nil {
		return 0, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.msg
	}
	return 2, err.Error()
}

// exitError ends the command with a specific exit status. An empty msg
// means the command already said what it had to. coded, when set, is the
// error with AWF's error code, details and hints.
type exitError struct {
	code  int
	msg   string
	coded *errcode.Error
}

func (e *exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}

func (e *exitError) Unwrap() error {
	if e.coded == nil {
		return nil
	}
	return e.coded
}

// codedError is an exitError with AWF's error code: the exit status is the
// code's category's, msg the message, details and hints as printed.
func codedError(c errcode.Code, msg string, details map[string]any, hints ...string) *exitError {
	return &exitError{code: c.ExitCode(), msg: msg, coded: &errcode.Error{Code: c, Message: msg, Details: details, Hints: hints}}
}
