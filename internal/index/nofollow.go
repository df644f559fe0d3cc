package index

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"modernc.org/sqlite"

	"github.com/reelhq/reel/internal/safefile"
)

// The index file must never be opened through a symlink: whoever can write
// the storage directory could swap one in at index.db while a reader runs,
// and SQLite, which resolves every link in a database's name before it
// opens it, would turn the link's target into a database (and its mode to
// the index's). reel cannot pass SQLite its own descriptor, so it makes
// each open one that cannot follow a link, and checks what was opened
// before writing a byte:
//
//   - reel creates index.db itself (safefile.Touch: O_NOFOLLOW, 0600), and
//     SQLite opens it with mode=rw, so SQLite never creates it: a dangling
//     link creates nothing;
//   - SQLite opens the file with O_NOFOLLOW (its unix VFS always does), so
//     a link swapped in after it resolved the name fails the open;
//   - a link swapped in before it resolved the name makes SQLite open the
//     link's target under the target's name: each new connection asks
//     SQLite which file it opened (PRAGMA database_list) and is refused,
//     before any PRAGMA writes, unless it is index.db itself;
//   - the -wal, -shm and -journal files are named after the file SQLite
//     opened and opened with O_NOFOLLOW, so a link at any of them fails.

// ErrFollowed is returned when the index file turned out to be a link to
// another file.
var ErrFollowed = errors.New("the index file is not index.db itself (a symlink was swapped in): refused")

// connector opens connections to the index at want and checks each.
type connector struct {
	drv  driver.Driver
	dsn  string
	want string // the database's path, its directories' links resolved
}

// pragmas set on every connection once it is checked.
var pragmas = []string{"PRAGMA busy_timeout = 10000", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"}

func newConnector(path string) (*connector, error) {
	// The directories leading to the storage are the user's to choose
	// and may be links: resolve them, so that the name SQLite reports
	// can be compared with this one.
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	want := filepath.Join(dir, filepath.Base(path))
	return &connector{drv: &sqlite.Driver{}, dsn: "file:" + want + "?mode=rw&_txlock=immediate", want: want}, nil
}

func (c *connector) Driver() driver.Driver { return c.drv }

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := safefile.Touch(c.want); err != nil {
		return nil, err
	}
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if err := c.check(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	ex := conn.(driver.ExecerContext)
	for _, p := range pragmas {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return conn, nil
}

// check refuses a connection whose main database is not c.want itself.
func (c *connector) check(ctx context.Context, conn driver.Conn) error {
	rows, err := conn.(driver.QueryerContext).QueryContext(ctx, "PRAGMA database_list", nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(vals); err == io.EOF {
			return fmt.Errorf("%w: SQLite lists no main database", ErrFollowed)
		} else if err != nil {
			return err
		}
		if text(vals[1]) != "main" {
			continue
		}
		if got := text(vals[2]); got != c.want {
			return fmt.Errorf("%w: SQLite opened %s", ErrFollowed, got)
		}
		return nil
	}
}

func text(v driver.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
