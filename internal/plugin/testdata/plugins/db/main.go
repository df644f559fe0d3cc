// Command db is a test plugin: operations exec and query on the SQLite
// file its config names (database), through database/sql and
// modernc.org/sqlite.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	_ "modernc.org/sqlite"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
	"github.com/reelhq/reel/internal/plugin/testdata/plugins/kit"
)

func main() {
	var db *sql.DB
	args := func(in map[string]any) []any {
		l, _ := in["args"].([]any)
		return l
	}
	inputs := []*pluginv1.InputSchema{
		{Name: "sql", Type: "string", Required: true, Description: "The statement."},
		{Name: "args", Type: "array", Description: "Its parameters."},
	}
	kit.Serve(&kit.Plugin{
		Name: "db",
		Init: func(cfg map[string]any) error {
			path, _ := cfg["database"].(string)
			if path == "" {
				return errors.New("config database is not set")
			}
			var err error
			db, err = sql.Open("sqlite", path)
			return err
		},
		Shutdown: func() {
			if db != nil {
				db.Close()
			}
		},
		Operations: []kit.Operation{
			{
				Schema: &pluginv1.OperationSchema{Name: "exec", Description: "Run a statement.", Inputs: inputs,
					Outputs: []*pluginv1.OutputSchema{{Name: "rows_affected", Type: "integer"}}},
				Run: func(ctx context.Context, in map[string]any) (string, map[string]any, error) {
					res, err := db.ExecContext(ctx, kit.String(in, "sql"), args(in)...)
					if err != nil {
						return "", nil, err
					}
					n, _ := res.RowsAffected()
					return fmt.Sprintf("%d row(s) affected", n), map[string]any{"rows_affected": n}, nil
				},
			},
			{
				Schema: &pluginv1.OperationSchema{Name: "query", Description: "Run a query.", Inputs: inputs,
					Outputs: []*pluginv1.OutputSchema{{Name: "rows", Type: "array"}, {Name: "count", Type: "integer"}}},
				Run: func(ctx context.Context, in map[string]any) (string, map[string]any, error) {
					rs, err := db.QueryContext(ctx, kit.String(in, "sql"), args(in)...)
					if err != nil {
						return "", nil, err
					}
					defer rs.Close()
					cols, err := rs.Columns()
					if err != nil {
						return "", nil, err
					}
					var rows []map[string]any
					for rs.Next() {
						vals := make([]any, len(cols))
						ptrs := make([]any, len(cols))
						for i := range vals {
							ptrs[i] = &vals[i]
						}
						if err := rs.Scan(ptrs...); err != nil {
							return "", nil, err
						}
						row := map[string]any{}
						for i, c := range cols {
							row[c] = vals[i]
						}
						rows = append(rows, row)
					}
					if err := rs.Err(); err != nil {
						return "", nil, err
					}
					return fmt.Sprintf("%d row(s)", len(rows)), map[string]any{"rows": rows, "count": len(rows)}, nil
				},
			},
		},
	})
}
