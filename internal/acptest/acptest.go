// Package acptest is an editor for tests of reel's ACP server: the SDK's
// client side of a connection (sdk.Client), which keeps every session
// update it is sent, in order, and answers permission requests as the
// test says. It offers no files and no terminals, as reel asks for
// neither.
package acptest

import (
	"context"
	"errors"
	"slices"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// Editor is an sdk.Client that records what the agent sends.
type Editor struct {
	mu      sync.Mutex
	updates map[sdk.SessionId][]sdk.SessionUpdate
	perms   []sdk.RequestPermissionRequest
	answer  func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome
	changed chan struct{}
}

var _ sdk.Client = (*Editor)(nil)

// NewEditor returns an editor that cancels every permission request until
// told how to answer.
func NewEditor() *Editor {
	return &Editor{updates: map[sdk.SessionId][]sdk.SessionUpdate{}, changed: make(chan struct{})}
}

// Answer sets how permission requests are answered from now on.
func (e *Editor) Answer(f func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answer = f
}

// Permissions returns the permission requests received since the last
// call, and forgets them.
func (e *Editor) Permissions() []sdk.RequestPermissionRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.perms
	e.perms = nil
	return p
}

// Mark is how many updates session id got so far; Since(id, mark) returns
// those that came after.
func (e *Editor) Mark(id sdk.SessionId) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.updates[id])
}

// Since returns the updates of session id after mark.
func (e *Editor) Since(id sdk.SessionId, mark int) []sdk.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.updates[id][mark:])
}

// WaitFor waits until an update of session id that came after mark
// satisfies ok, and returns the updates up to it.
func (e *Editor) WaitFor(ctx context.Context, id sdk.SessionId, mark int, ok func(sdk.SessionUpdate) bool) ([]sdk.SessionUpdate, error) {
	seen := mark
	for {
		e.mu.Lock()
		us := e.updates[id]
		ch := e.changed
		e.mu.Unlock()
		for ; seen < len(us); seen++ {
			if ok(us[seen]) {
				return slices.Clone(us[mark : seen+1]), nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// SessionUpdate records n.
func (e *Editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates[n.SessionId] = append(e.updates[n.SessionId], n.Update)
	close(e.changed)
	e.changed = make(chan struct{})
	return nil
}

// RequestPermission records r and answers it as Answer said.
func (e *Editor) RequestPermission(_ context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	e.perms = append(e.perms, r)
	answer := e.answer
	e.mu.Unlock()
	if answer == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: answer(r)}, nil
}

var errNotOffered = errors.New("the test editor does not offer this")

// ReadTextFile is not offered.
func (e *Editor) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNotOffered
}

// WriteTextFile is not offered.
func (e *Editor) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNotOffered
}

// CreateTerminal is not offered.
func (e *Editor) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNotOffered
}

// KillTerminal is not offered.
func (e *Editor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNotOffered
}

// TerminalOutput is not offered.
func (e *Editor) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNotOffered
}

// ReleaseTerminal is not offered.
func (e *Editor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNotOffered
}

// WaitForTerminalExit is not offered.
func (e *Editor) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNotOffered
}
