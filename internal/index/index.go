// Package index keeps the run index: a SQLite database under the storage
// directory (<storage>/index.db) that makes the run list, its filters and
// full-text search fast. The transcripts stay the source of truth; the
// index can be deleted at any time and is rebuilt from them alone.
//
// What is indexed. One row per transcript in runs: the run's workflow,
// parent, start, last event, status (of the last run.started …
// run.completed span), duration, token usage and cost with its child runs'
// (as reel tree counts them: reported costs, plus the tokens of the steps
// whose provider reported none priced from the table WithPrices gives;
// rollup.go), provider and model sets,
// step, tool and failure counts, plus the file's size, mtime and the byte
// offset up to which it was read. For text, each transcript is cut
// into chunks of consecutive complete lines (chunkSize bytes, never
// splitting a line); the distinct terms of every string value in the
// chunk's payloads (prompts, replies, thinking, tool inputs and outputs,
// commands and their output, errors; JSON keys left out) go into an FTS5
// table (contentless, detail=none) whose rowid is the chunk's. A term is a
// maximal run of letters and digits, lowercased, at most maxTermLen bytes:
// longer runs are base64 images and hashes, which are left out.
//
// How a search is answered. FTS5 returns the chunks holding every query
// term, newest first (rowids grow as transcripts are indexed, and a rebuild
// indexes runs in order of start). Each candidate chunk is read back from
// its transcript by byte range and every event in it checked against the
// whole query (terms, prefixes, phrases, exclusions); the events that match
// are the hits, with a snippet cut from the transcript. So the index stays
// small and fast to build (a chunk's terms are a fraction of its bytes),
// and a hit is always what the transcript says now.
//
// How staleness is detected. The database records the schema version; a
// missing, unreadable or older database is rebuilt. Sync, which every read
// through Open runs first, compares the transcripts directory's mtime with
// the one recorded at the last full scan; when it changed (a transcript was
// added or removed) every file's size and mtime is compared with its row.
// Runs that have not ended are checked on every Sync, since they are the
// ones that grow. A directory mtime less than a second old is not trusted
// (a file created in the same clock tick would not change it), so the next
// Sync scans again. Writers that append to an ended run (reel resume) or
// write new runs call Update with the paths they wrote; reel index does a
// full scan.
//
// How it stays consistent with transcripts written concurrently. Only
// complete lines (ending in a newline) are read; a line being written is
// left for the next update. Each file's update runs in one IMMEDIATE
// transaction that rereads the file's row first, so two processes updating
// the same index (reel serve and a finishing reel run) never index the same
// lines twice. A file that shrank or whose first line changed is indexed
// again from the start.
package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/transcript"
)

// schemaVersion changes whenever the schema or what is indexed changes; an
// index of another version is rebuilt.
const schemaVersion = "5"

// FileName is the index's file name under the storage directory.
const FileName = "index.db"

// chunkSize is how many transcript bytes one full-text chunk covers at
// most: large enough that its distinct terms are a small fraction of its
// bytes, small enough that checking a candidate chunk reads little.
const chunkSize = 256 << 10

const schema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
	run_id TEXT PRIMARY KEY,
	parent_run_id TEXT NOT NULL DEFAULT '',
	workflow TEXT NOT NULL DEFAULT '',
	imported INTEGER NOT NULL DEFAULT 0,
	untimed INTEGER NOT NULL DEFAULT 0,
	started INTEGER NOT NULL DEFAULT 0,
	last_event INTEGER NOT NULL DEFAULT 0,
	ended INTEGER NOT NULL DEFAULT 0,
	status TEXT NOT NULL DEFAULT '',
	exit_code INTEGER,
	duration_ms INTEGER NOT NULL DEFAULT 0,
	error TEXT NOT NULL DEFAULT '',
	input_tokens INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens INTEGER NOT NULL DEFAULT 0,
	total_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd REAL,
	computed_usd REAL NOT NULL DEFAULT 0,
	unpriced_steps INTEGER NOT NULL DEFAULT 0,
	steps INTEGER NOT NULL DEFAULT 0,
	failed_steps INTEGER NOT NULL DEFAULT 0,
	tool_calls INTEGER NOT NULL DEFAULT 0,
	tool_errors INTEGER NOT NULL DEFAULT 0,
	events INTEGER NOT NULL DEFAULT 0,
	providers TEXT NOT NULL DEFAULT '',
	models TEXT NOT NULL DEFAULT '',
	file TEXT NOT NULL,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	head TEXT NOT NULL DEFAULT '',
	offset INTEGER NOT NULL,
	fold TEXT NOT NULL,
	own TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_started ON runs(started DESC, run_id DESC);
CREATE INDEX runs_workflow ON runs(workflow, started DESC);
CREATE INDEX runs_status ON runs(status, started DESC);
CREATE INDEX runs_open ON runs(ended) WHERE ended = 0;
CREATE INDEX runs_parent ON runs(parent_run_id);
CREATE TABLE chunks (
	id INTEGER PRIMARY KEY,
	run_id TEXT NOT NULL,
	start INTEGER NOT NULL,
	end INTEGER NOT NULL
);
CREATE INDEX chunks_run ON chunks(run_id, start);
CREATE VIRTUAL TABLE fts USING fts5(terms, content='', contentless_delete=1, detail=none, tokenize='ascii');
-- FTS5 writes its pending terms out as a new segment whenever they pass
-- hashsize (1 MB by default), and merging those many small segments was
-- most of the time spent indexing. With 32 MB, a batch of transcripts
-- (see updateCandidates) becomes about one segment, written at commit.
INSERT INTO fts(fts, rank) VALUES ('hashsize', 33554432);
`

// Index is an open run index over one storage directory. It is safe for
// concurrent use, and several processes may use the same index file.
type Index struct {
	// db is swapped for a fresh database when the file is found damaged
	// (repair).
	db   atomic.Pointer[sql.DB]
	dir  string // the transcripts directory
	path string

	mu       sync.Mutex // serializes Sync within the process
	lastScan time.Time
	// prices price the agent steps whose provider reported no cost when
	// a run's row is written.
	prices *pricing.Table
	// onRepair is told of damage found and repaired (OnRepair).
	onRepair func(damage error)
}

// conn is the database.
func (ix *Index) conn() *sql.DB { return ix.db.Load() }

// An Option tunes Open and Rebuild.
type Option func(*Index)

// WithPrices prices the agent steps whose provider reported no cost from
// t (the project's table) instead of pricing.Default(), as reel stats and
// reel tree do. A row is priced when it is written: a run indexed before
// the table changed keeps its cost until reel index --rebuild.
func WithPrices(t *pricing.Table) Option {
	return func(ix *Index) {
		if t != nil {
			ix.prices = t
		}
	}
}

// Path returns the index file of a storage directory.
func Path(storage string) string { return filepath.Join(storage, FileName) }

// Files returns the names SQLite opens for the index of a storage
// directory: the database and its write-ahead log, shared memory and
// rollback journal. Open never follows a symlink at any of them
// (nofollow.go); callers check them with safefile.CheckPlain first only to
// say so clearly, before any work.
func Files(storage string) []string {
	p := Path(storage)
	return []string{p, p + "-wal", p + "-shm", p + "-journal"}
}

// Open opens the index of the storage directory, creating or rebuilding it
// when it is missing, of another schema version or unreadable, and brings
// it up to date with the transcripts (Sync).
func Open(ctx context.Context, storage string, opts ...Option) (*Index, error) {
	ix, err := open(storage, opts)
	if err == nil {
		err = ix.Sync(ctx)
		if err != nil {
			ix.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	return ix, nil
}

func open(storage string, opts []Option) (*Index, error) {
	ix := &Index{dir: transcript.Dir(storage), path: Path(storage), prices: pricing.Default()}
	for _, o := range opts {
		o(ix)
	}
	if err := os.MkdirAll(storage, 0o700); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	if db, err := connect(ix.path); err == nil {
		var v string
		err = db.QueryRow(`SELECT value FROM meta WHERE key = 'schema'`).Scan(&v)
		if err == nil && v == schemaVersion {
			ix.db.Store(db)
			return ix, nil
		}
		db.Close()
	}
	// Missing, older or damaged: start afresh. The transcripts hold
	// everything the index does.
	db, err := fresh(ix.path)
	if err != nil {
		return nil, err
	}
	ix.db.Store(db)
	return ix, nil
}

// fresh removes the database at path and creates an empty one.
func fresh(path string) (*sql.DB, error) {
	if err := removeDB(path); err != nil {
		return nil, err
	}
	db, err := connect(path)
	if err != nil {
		return nil, err
	}
	if err := create(db, path); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// connect opens the database in WAL mode with synchronous=NORMAL: a
// commit does not wait for the disk, and a power loss can lose the last
// commits but not corrupt the file. That is enough for the index, which
// holds nothing the transcripts do not and is rebuilt from them.
//
// Every connection is checked before it is used (nofollow.go): SQLite
// follows a symlink at the database's name, so a link swapped in while a
// reader runs would have it write elsewhere.
func connect(path string) (*sql.DB, error) {
	c, err := newConnector(path)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	db := sql.OpenDB(c)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	return db, nil
}

func removeDB(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale index: %w", err)
		}
	}
	return nil
}

func create(db *sql.DB, path string) error {
	tx, err := db.Begin()
	if err != nil {
		return fmt.Errorf("create index %s: %w", path, err)
	}
	defer tx.Rollback()
	var n int
	// Another process may have created it between our check and now.
	if tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'meta'`).Scan(&n); n > 0 {
		return tx.Commit()
	}
	if _, err := tx.Exec(schema); err != nil {
		return fmt.Errorf("create index %s: %w", path, err)
	}
	if _, err := tx.Exec(`INSERT INTO meta(key, value) VALUES ('schema', ?), ('dir_mtime', '0')`, schemaVersion); err != nil {
		return fmt.Errorf("create index %s: %w", path, err)
	}
	return tx.Commit()
}

// file is the transcript of run id.
func (ix *Index) file(id string) string { return filepath.Join(ix.dir, id+".jsonl") }

// Close closes the database.
func (ix *Index) Close() error { return ix.conn().Close() }

// Rebuild deletes the index of storage and builds it again from the
// transcripts alone.
func Rebuild(ctx context.Context, storage string, opts ...Option) (*Index, Stats, error) {
	if err := removeDB(Path(storage)); err != nil {
		return nil, Stats{}, err
	}
	return OpenScan(ctx, storage, opts...)
}

// OpenScan opens the index of storage as Open does, but instead of Sync
// compares every transcript with its row (Scan), and says what it did: what
// reel index does.
func OpenScan(ctx context.Context, storage string, opts ...Option) (*Index, Stats, error) {
	ix, err := open(storage, opts)
	if err != nil {
		return nil, Stats{}, err
	}
	st, err := ix.Scan(ctx)
	if err != nil {
		ix.Close()
		return nil, st, err
	}
	return ix, st, nil
}

// Stats says what an update did.
type Stats struct {
	Files   int   // transcripts read (wholly or from where the index was)
	Bytes   int64 // bytes read from them
	Removed int   // runs whose transcript is gone
	// Skipped counts the lines left out for being longer than the
	// readers' line limit (transcript.DefaultMaxLineSize).
	Skipped int
}

// Sync brings the index up to date with the transcripts directory, cheaply
// when nothing changed (see the package comment).
func (ix *Index) Sync(ctx context.Context) error {
	_, err := repaired(ctx, ix, func() (struct{}, error) { return struct{}{}, ix.sync(ctx) })
	return err
}

func (ix *Index) sync(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, err := os.Stat(ix.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	var recorded string
	if err := ix.conn().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dir_mtime'`).Scan(&recorded); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if recorded != fmt.Sprint(st.ModTime().UnixNano()) {
		_, err := ix.scanLocked(ctx)
		return err
	}
	rows, err := ix.conn().QueryContext(ctx, `SELECT run_id FROM runs WHERE ended = 0`)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	var open []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			rows.Close()
			return fmt.Errorf("index: %w", err)
		}
		open = append(open, ix.file(f))
	}
	rows.Close()
	_, err = ix.update(ctx, open)
	return err
}

// Scan compares every transcript with its row and updates what changed:
// what reel index does, and what Sync does when the directory changed.
func (ix *Index) Scan(ctx context.Context) (Stats, error) {
	st, err := ix.scan(ctx)
	if damage := corrupt(err); damage != nil {
		// The repair's scan is this scan.
		return ix.repair(ctx, damage)
	}
	return st, err
}

func (ix *Index) scan(ctx context.Context) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.scanLocked(ctx)
}

func (ix *Index) scanLocked(ctx context.Context) (Stats, error) {
	var stats Stats
	dirInfo, err := os.Stat(ix.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return stats, nil
	}
	if err != nil {
		return stats, fmt.Errorf("index: %w", err)
	}
	entries, err := os.ReadDir(ix.dir)
	if err != nil {
		return stats, fmt.Errorf("index: list transcripts: %w", err)
	}
	type seenRow struct {
		size, mtime int64
		parent      string
	}
	known := map[string]seenRow{}
	rows, err := ix.conn().QueryContext(ctx, `SELECT run_id, size, mtime, parent_run_id FROM runs`)
	if err != nil {
		return stats, fmt.Errorf("index: %w", err)
	}
	for rows.Next() {
		var id string
		var k seenRow
		if err := rows.Scan(&id, &k.size, &k.mtime, &k.parent); err != nil {
			rows.Close()
			return stats, fmt.Errorf("index: %w", err)
		}
		known[id] = k
	}
	rows.Close()
	var changed []candidate
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || transcript.ValidRunID(id) != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		k, seen := known[id]
		delete(known, id)
		if seen && k.size == info.Size() && k.mtime == info.ModTime().UnixNano() {
			continue
		}
		changed = append(changed, candidate{path: filepath.Join(ix.dir, e.Name()), size: info.Size()})
	}
	for id, k := range known {
		if _, err := ix.conn().ExecContext(ctx, `DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE run_id = ?)`, id); err != nil {
			return stats, fmt.Errorf("index: %w", err)
		}
		if _, err := ix.conn().ExecContext(ctx, `DELETE FROM chunks WHERE run_id = ?; DELETE FROM runs WHERE run_id = ?`, id, id); err != nil {
			return stats, fmt.Errorf("index: %w", err)
		}
		// the run above it no longer counts its figures
		if err := rollUp(ctx, ix.conn(), k.parent); err != nil {
			return stats, err
		}
		stats.Removed++
	}
	orderByStart(changed)
	st, err := ix.updateCandidates(ctx, changed)
	stats.Files, stats.Bytes, stats.Skipped = st.Files, st.Bytes, st.Skipped
	if err != nil {
		return stats, err
	}
	// A directory changed in the last second may change again within the
	// same mtime tick: leave it unrecorded so the next Sync scans again.
	mt := dirInfo.ModTime()
	rec := fmt.Sprint(mt.UnixNano())
	if time.Since(mt) < time.Second {
		rec = "0"
	}
	if _, err := ix.conn().ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'dir_mtime'`, rec); err != nil {
		return stats, fmt.Errorf("index: %w", err)
	}
	ix.lastScan = time.Now()
	return stats, nil
}

// Update indexes the transcripts at paths (new ones wholly, known ones
// from where the index left them). Writers call it after writing runs.
func (ix *Index) Update(ctx context.Context, paths ...string) (Stats, error) {
	return repaired(ctx, ix, func() (Stats, error) {
		ix.mu.Lock()
		defer ix.mu.Unlock()
		return ix.update(ctx, paths)
	})
}

func (ix *Index) update(ctx context.Context, paths []string) (Stats, error) {
	cands := make([]candidate, 0, len(paths))
	for _, p := range paths {
		cands = append(cands, candidate{path: p})
	}
	return ix.updateCandidates(ctx, cands)
}

// row is what the index holds about one file before an update.
type row struct {
	found  bool
	size   int64
	mtime  int64
	head   string
	offset int64
	fold   fold
	// lastChunk is the run's last chunk, redone when it is small.
	lastChunk          int64
	lastStart, lastEnd int64
	lastChunkFound     bool
}

// querier is a transaction or the database itself.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (ix *Index) readRow(ctx context.Context, tx querier, runID string) (row, error) {
	var r row
	var foldJSON string
	err := tx.QueryRowContext(ctx, `SELECT size, mtime, head, offset, fold FROM runs WHERE run_id = ?`, runID).
		Scan(&r.size, &r.mtime, &r.head, &r.offset, &foldJSON)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.found = true
	if err := json.Unmarshal([]byte(foldJSON), &r.fold); err != nil {
		// A fold we cannot read is redone from the file.
		r.found = false
		return r, nil
	}
	err = tx.QueryRowContext(ctx, `SELECT id, start, end FROM chunks WHERE run_id = ? ORDER BY start DESC LIMIT 1`, runID).
		Scan(&r.lastChunk, &r.lastStart, &r.lastEnd)
	if err == nil {
		r.lastChunkFound = true
	} else if !errors.Is(err, sql.ErrNoRows) {
		return r, err
	}
	return r, nil
}

func (ix *Index) deleteRun(ctx context.Context, tx *sql.Tx, runID string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE run_id = ?)`, runID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE run_id = ?`, runID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE run_id = ?`, runID)
	return err
}

func joinSet(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return "," + strings.Join(s, ",") + ","
}

func splitSet(s string) []string {
	s = strings.Trim(s, ",")
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
