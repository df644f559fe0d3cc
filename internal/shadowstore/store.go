// Package shadowstore writes traces into Shadow's on-disk store: the
// sharded .shadow/traces/<id[0:2]>/<id[2:]>.agentlog files and the SQLite
// index .shadow/index.sqlite, with Shadow's own schema, through the
// pure-Go modernc.org/sqlite driver. It is apart from package agentlog so
// that reading and writing traces does not link a database.
package shadowstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/internal/safefile"
	_ "modernc.org/sqlite" // pure-Go database/sql driver "sqlite"
)

// indexSchema is Shadow's index schema (store/schema.sql, v0.1), so Shadow
// opens an index reel wrote and reel extends one Shadow wrote.
const indexSchema = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
PRAGMA foreign_keys = ON;
CREATE TABLE IF NOT EXISTS traces (
    id              TEXT PRIMARY KEY,
    created_at      INTEGER NOT NULL,
    session_tag     TEXT,
    root_record_id  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS traces_session_tag_idx ON traces(session_tag);
CREATE INDEX IF NOT EXISTS traces_created_at_idx ON traces(created_at);
CREATE TABLE IF NOT EXISTS tags (
    trace_id  TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (trace_id, key),
    FOREIGN KEY (trace_id) REFERENCES traces(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS tags_kv_idx ON tags(key, value);
CREATE TABLE IF NOT EXISTS replays (
    id                  TEXT PRIMARY KEY,
    baseline_trace_id   TEXT NOT NULL,
    config_hash         TEXT NOT NULL,
    outcome_record_id   TEXT,
    created_at          INTEGER NOT NULL,
    FOREIGN KEY (baseline_trace_id) REFERENCES traces(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS replays_baseline_idx ON replays(baseline_trace_id);
CREATE INDEX IF NOT EXISTS replays_config_idx ON replays(config_hash);
`

// StorePath returns where Shadow's store under project keeps the trace
// whose root record has id: .shadow/traces/<hex[0:2]>/<hex[2:]>.agentlog.
func StorePath(project, id string) (string, error) {
	if !agentlog.ValidID(id) {
		return "", fmt.Errorf("trace id %q is not sha256:<64 hex>", id)
	}
	hex := id[len(agentlog.IDPrefix):]
	return filepath.Join(project, ".shadow", "traces", hex[:2], hex[2:]+".agentlog"), nil
}

// IndexPath is Shadow's SQLite index under project.
func IndexPath(project string) string {
	return filepath.Join(project, ".shadow", "index.sqlite")
}

// Put writes each trace into Shadow's store under the project directory
// (the directory holding .shadow) and registers it in the SQLite index, as
// `shadow` itself does: file first (tmp + rename), then the index row and
// its tags in one transaction. It returns the paths written.
func Put(ctx context.Context, project string, traces [][]agentlog.Record) ([]string, error) {
	// SQLite creates the index and its -wal and -shm files with the mode
	// of an existing database file: creating it first makes them private.
	if err := safefile.MkdirAll(filepath.Dir(IndexPath(project))); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	if f, err := os.OpenFile(IndexPath(project), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	} else if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open index %s: not a regular file", IndexPath(project))
	} else {
		f.Close()
	}
	db, err := sql.Open("sqlite", IndexPath(project))
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	defer db.Close()
	paths := make([]string, 0, len(traces))
	for _, recs := range traces {
		if len(recs) == 0 {
			return paths, fmt.Errorf("store trace: empty trace")
		}
		root := recs[0]
		path, err := StorePath(project, root.ID)
		if err != nil {
			return paths, err
		}
		if err := agentlog.WriteFile(path, recs); err != nil {
			return paths, err
		}
		if len(paths) == 0 {
			// The file write created .shadow; now the index can live there.
			if _, err := db.ExecContext(ctx, indexSchema); err != nil {
				return paths, fmt.Errorf("create index %s: %w", IndexPath(project), err)
			}
		}
		if err := register(ctx, db, root); err != nil {
			return paths, fmt.Errorf("index trace %s: %w", root.ID, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func register(ctx context.Context, db *sql.DB, root agentlog.Record) error {
	t, err := root.Time()
	if err != nil {
		return err
	}
	var meta struct {
		SessionTag *string `json:"session_tag"`
	}
	if len(root.Meta) > 0 {
		_ = json.Unmarshal(root.Meta, &meta)
	}
	var payload struct {
		Tags map[string]any `json:"tags"`
	}
	_ = json.Unmarshal(root.Payload, &payload)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var tag any
	if meta.SessionTag != nil {
		tag = *meta.SessionTag
	} else if s, ok := payload.Tags["session_tag"].(string); ok {
		tag = s
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT OR REPLACE INTO traces (id, created_at, session_tag, root_record_id) VALUES (?, ?, ?, ?)`,
		root.ID, t.UnixMilli(), tag, root.ID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tags WHERE trace_id = ?`, root.ID); err != nil {
		return err
	}
	for k, v := range payload.Tags {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tags (trace_id, key, value) VALUES (?, ?, ?)`, root.ID, k, s); err != nil {
			return err
		}
	}
	return tx.Commit()
}
