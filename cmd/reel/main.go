// Command reel runs AI-agent workflows and records every run as a canonical
// agent exchange transcript.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
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
		code, msg := exitStatus(err)
		if msg != "" && cmd != nil {
			msg = hintsOff(cmd)(msg)
		}
		if msg != "" {
			fmt.Fprintln(os.Stderr, "reel:", msg)
		}
		os.Exit(code)
	}
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
// means the command already said what it had to.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}
