// Package tui is `reel tui`: the whole product in one terminal screen, live.
// Five tabs, as AWF's TUI has them, with its keys: Workflows (browse,
// filter, inspect, validate and launch with an input form), Monitoring
// (every live run of the storage, followed from its transcript), History
// (the run index with filters, full-text search and a side-by-side diff),
// Conversations (a run's exchange rendered as Markdown) and External logs
// (a live tail of agent CLI session files, importable with one key).
//
// What it decides:
//
//   - Where the data comes from. Runs are read only through package runs
//     (a live run through Run.Follow, the follower reel serve streams
//     from) and rebuilt with package exectree; lists and search come from
//     the run index; workflows from the engine's catalog; runs start and
//     are cancelled through package launch, the one launcher. A run
//     started by another process (reel run in another terminal) is
//     cancelled by sending SIGTERM to the process that holds its
//     transcript's lock, which is what reel run answers by cancelling.
//   - How it stays live. A tick every 250 ms polls what may have changed
//     (the live runs, the followed transcript, the tailed session file);
//     the heavy reads (rebuilding a tree, rendering a conversation) run as
//     commands off the update loop and are dropped when stale.
//   - How it scales. Lists are windows over their data: only the visible
//     rows are rendered, and the history list pages through the index as
//     the cursor nears the end of what it holds, so a storage of 10,000
//     runs opens as fast as one of ten.
//   - What it never does: hand-written terminal handling. Bubble Tea owns
//     the terminal (raw mode, the alternate screen, resize, restoring the
//     terminal on exit, panic and signal) and the colour profile (NO_COLOR
//     turns colours off; the status icons still say everything).
//
// The Model is an ordinary Bubble Tea model: tests drive it with key
// messages and read View without a terminal; the tmux tests drive the
// real binary.
package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runs"
)

// Config is what the TUI works on.
type Config struct {
	// Launcher starts and cancels runs; its engine lists and loads the
	// workflows and names the storage.
	Launcher *launch.Launcher
	// Prices price agent steps whose provider reported no cost.
	Prices *pricing.Table
	// Import imports an agent session file into the storage and returns
	// the run id it got (reel import). Nil hides the key.
	Import func(ctx context.Context, path string) (string, error)
	// Sessions are the directories of agent CLI sessions the External logs
	// tab tails (DefaultSessionDirs when nil).
	Sessions []SessionDir
	// NoColor turns colours off (NO_COLOR).
	NoColor bool
	// Tick is the refresh period (250 ms when 0).
	Tick time.Duration
}

// Tab numbers, in AWF's order.
const (
	TabWorkflows = iota
	TabMonitoring
	TabHistory
	TabConversations
	TabLogs
	numTabs
)

var tabNames = [numTabs]string{"Workflows", "Monitoring", "History", "Conversations", "External logs"}

// env is what every tab shares.
type env struct {
	cfg     Config
	storage string
	store   *runs.Store
	ix      *index.Index
	st      styles
	ctx     context.Context
}

// open opens the run id of the storage.
func (e *env) open(id string) (*runs.Run, error) { return e.store.ID(id) }

// Run runs the TUI on the terminal until the user quits or ctx ends. Runs
// started here and still going when it quits are cancelled (they stay
// resumable).
func Run(ctx context.Context, cfg Config) error {
	m, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // a signal: the terminal is restored, nothing to say
	}
	return err
}

// New opens the storage's run index and returns the model, on the
// Workflows tab.
func New(ctx context.Context, cfg Config) (*Model, error) {
	if cfg.Launcher == nil {
		return nil, errors.New("tui: no launcher")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 250 * time.Millisecond
	}
	if cfg.Sessions == nil {
		cfg.Sessions = DefaultSessionDirs()
	}
	storage := cfg.Launcher.Engine().Storage
	if err := os.MkdirAll(filepath.Join(storage, "transcripts"), 0o755); err != nil {
		return nil, fmt.Errorf("tui: storage %s: %w", storage, err)
	}
	ix, err := index.Open(ctx, storage, index.WithPrices(cfg.Prices))
	if err != nil {
		return nil, fmt.Errorf("tui: open the run index of %s: %w", storage, err)
	}
	e := &env{cfg: cfg, storage: storage, store: runs.NewStore(storage, runs.Options{}), ix: ix, st: newStyles(cfg.NoColor), ctx: ctx}
	m := &Model{env: e, width: 80, height: 24}
	m.workflows = newWorkflowsTab(e)
	m.monitor = newMonitorTab(e)
	m.history = newHistoryTab(e)
	m.convo = newConvoTab(e)
	m.logs = newLogsTab(e)
	return m, nil
}

// Close stops what the model follows and closes the index. It does not
// cancel runs: the caller's launcher does that when it closes.
func (m *Model) Close() {
	m.monitor.stop()
	m.history.stop()
	m.env.ix.Close()
}
