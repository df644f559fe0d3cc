package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/reelhq/reel/internal/exitcode"
)

// A storage write error ends the run. When the transcript or the audit
// trail cannot be written (a full disk, an I/O error, the transcript's
// size limit), going on would run agents and commands that nobody can
// account for afterwards, and report success for a run whose record is
// cut. So the first such error cancels the run (every step and tool ends
// as on Ctrl-C, the cause naming the error), and the run ends with status
// failure, exit status 4, and the error as its reason, in its report, its
// run.completed (when the transcript still takes it), the audit trail and
// the display. The transcript keeps every line that was whole (the
// recorder cuts a partial one), so it stays a valid, if interrupted, file.

// errStorage marks the cause of a run cancelled by a storage write error.
var errStorage = errors.New("recording failed")

// haltable gives the run a context that a storage write error cancels.
// Sub-workflows run in it, so a failure in any of them stops the whole
// tree.
func (r *run) haltable(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	r.halt = cancel
	r.mu.Unlock()
	return ctx
}

// recordFailed notes a storage write error and stops the run at the first.
func (r *run) recordFailed(err error) {
	r.mu.Lock()
	first := r.recErr == nil
	if first {
		r.recErr = err
	}
	halt := r.halt
	r.mu.Unlock()
	if first && halt != nil {
		halt(fmt.Errorf("%w: %v", errStorage, err))
	}
}

// storageEnding turns the run's ending into a system failure when a write
// error stopped it.
func (r *run) storageEnding(end ending) ending {
	r.mu.Lock()
	err := r.recErr
	r.mu.Unlock()
	if err == nil {
		return end
	}
	return ending{status: "failure", exitCode: exitcode.System, message: fmt.Sprintf("%v: %v; the run was stopped", errStorage, err)}
}
