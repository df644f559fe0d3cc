// What a source is: the recordings under a directory, and the format of
// each.

package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/safefile"
)

// sessionFiles lists the recordings under dir, in a stable order: files
// with the extensions format's recordings have, and with format auto the
// Flow Studio run directories too. Hidden directories are passed over.
func sessionFiles(dir, format string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if path != dir && format == Auto && detectInterop(path) != "" {
				files = append(files, path) // a Flow Studio run directory
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		ext := strings.ToLower(filepath.Ext(path))
		switch normalize.Format(format) {
		case normalize.GeminiSession:
			if ext == ".json" {
				files = append(files, path)
			}
		case normalize.OpenAIChatStream, normalize.AnthropicSSE:
			if ext == ".jsonl" || ext == ".json" || ext == ".sse" || ext == ".txt" {
				files = append(files, path)
			}
		case Auto:
			if ext == ".jsonl" || ext == ".json" || ext == ".sse" || ext == ".txt" || ext == ".agentlog" {
				files = append(files, path)
			}
		default:
			if ext == ".jsonl" {
				files = append(files, path)
			}
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// detectFile detects the provider format of the recording at path from
// its first 64 KiB.
func detectFile(path string) (normalize.Format, bool, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	format, ok := normalize.Detect(head[:n])
	return format, ok, nil
}

// detectInterop names the interop format of path for format auto, or
// returns "" when path is not one: FlowStudio for a directory holding a
// Flow Studio run (meta.json with a run id, or events.jsonl, or a flow
// directory with llm/ or receipts/), Agentlog for a file named .agentlog
// or whose first line is a Shadow metadata record.
func detectInterop(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		if isFile(filepath.Join(path, "events.jsonl")) || isFile(filepath.Join(path, "meta.json")) && isFile(filepath.Join(path, "spec.json")) {
			return FlowStudio
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return ""
		}
		for _, e := range entries {
			if e.IsDir() && isDir(filepath.Join(path, e.Name(), "receipts")) {
				return FlowStudio
			}
		}
		return ""
	}
	if strings.HasSuffix(path, ".agentlog") {
		return Agentlog
	}
	f, err := safefile.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	var env struct {
		Version string          `json:"version"`
		ID      string          `json:"id"`
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal([]byte(line), &env) == nil && env.Version == agentlog.Version && env.Kind == agentlog.KindMetadata &&
		strings.HasPrefix(env.ID, agentlog.IDPrefix) && len(env.Payload) > 0 {
		return Agentlog
	}
	return ""
}

// agentlogFiles replaces each directory in paths (a Shadow store's
// traces/, say) by the .agentlog files under it, sorted.
func agentlogFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !isDir(p) {
			out = append(out, p)
			continue
		}
		var found []string
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".agentlog") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no .agentlog files under %s", p)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
