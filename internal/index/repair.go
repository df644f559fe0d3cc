package index

import (
	"context"
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

// Damage inside the database's pages (a disk error, a copy cut short and
// patched, a byte written by another program) makes SQLite answer
// "database disk image is malformed" from whichever query reaches the page.
// The index holds nothing the transcripts do not, so the answer to damage
// is the one a truncated or unreadable file already gets at Open: build it
// again. Every exported method that reads or writes the database repairs
// and retries once.

// SQLite's primary result codes for a damaged file.
const (
	sqliteCorrupt = 11 // SQLITE_CORRUPT: "database disk image is malformed"
	sqliteNotADB  = 26 // SQLITE_NOTADB: "file is not a database"
)

// ErrDamaged wraps the SQLite error of a damaged index file.
var ErrDamaged = errors.New("the run index is damaged")

// corrupt returns err as an ErrDamaged when it says the database file is
// damaged, else nil.
func corrupt(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() & 0xff {
	case sqliteCorrupt, sqliteNotADB:
		return fmt.Errorf("%w (%v)", ErrDamaged, se)
	}
	return nil
}

// OnRepair has f told of damage found in the index file, once it has been
// rebuilt from the transcripts: commands print it as a warning.
func OnRepair(f func(damage error)) Option {
	return func(ix *Index) { ix.onRepair = f }
}

// repaired runs op and, when it found the index damaged, rebuilds the index
// and runs op again.
func repaired[T any](ctx context.Context, ix *Index, op func() (T, error)) (T, error) {
	v, err := op()
	if damage := corrupt(err); damage != nil {
		if _, err := ix.repair(ctx, damage); err != nil {
			return v, err
		}
		return op()
	}
	return v, err
}

// repair replaces the damaged database with a fresh one, fills it from the
// transcripts and returns what that scan did. Queries running on the old
// database end as they would have; new ones use the new one.
func (ix *Index) repair(ctx context.Context, damage error) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	db, err := fresh(ix.path)
	if err != nil {
		return Stats{}, fmt.Errorf("%w; rebuilding it: %w", damage, err)
	}
	ix.db.Swap(db).Close()
	st, err := ix.scanLocked(ctx)
	if err != nil {
		return st, fmt.Errorf("%w; rebuilding it: %w", damage, err)
	}
	if ix.onRepair != nil {
		ix.onRepair(damage)
	}
	return st, nil
}
