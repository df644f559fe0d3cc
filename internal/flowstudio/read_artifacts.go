package flowstudio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/safefile"
)

// ReadReceipt reads and checks one receipt file.
func ReadReceipt(path string) (*Receipt, error) {
	data, err := readSmall(safefile.FS(filepath.Dir(path)), filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("read receipt %s: %w", path, err)
	}
	return ParseReceipt(data)
}

// maxDocument bounds the JSON documents of a run (receipts, meta.json,
// spec.json), which are small; a huge one is refused, not loaded.
const maxDocument = 16 << 20

func readSmall(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocument {
		return nil, fmt.Errorf("over %d bytes", maxDocument)
	}
	return data, nil
}

// ParseReceipt decodes a receipt: exactly one JSON object holding the
// fields Flow Studio's contract requires.
func ParseReceipt(data []byte) (*Receipt, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("invalid receipt: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid receipt: more than one JSON value")
	}
	var missing []string
	for _, k := range receiptRequired {
		if _, ok := fields[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("invalid receipt: missing %s", strings.Join(missing, ", "))
	}
	var r Receipt
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("invalid receipt: %w", err)
	}
	switch r.Status {
	case "succeeded", "failed", "skipped":
	default:
		return nil, fmt.Errorf("invalid receipt: status %q", r.Status)
	}
	return &r, nil
}

// scanFlows finds the flow directories (spec order first) and their
// artifacts.
func (im *importer) scanFlows(specFlows []string) ([]string, []*artifact) {
	entries, err := fs.ReadDir(im.fsys, ".")
	if err != nil {
		im.warn("list %s: %v", im.dir, err)
		return nil, nil
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if im.isDir(path.Join(e.Name(), "llm")) || im.isDir(path.Join(e.Name(), "receipts")) {
			found = append(found, e.Name())
		}
	}
	var flows []string
	seen := map[string]bool{}
	for _, f := range specFlows {
		if !seen[f] {
			flows = append(flows, f)
			seen[f] = true
		}
	}
	for _, f := range found {
		if !seen[f] {
			flows = append(flows, f)
			seen[f] = true
		}
	}
	var arts []*artifact
	for _, flow := range flows {
		arts = append(arts, im.scanFlow(flow)...)
	}
	return flows, arts
}

func (im *importer) isDir(p string) bool {
	st, err := fs.Stat(im.fsys, p)
	return err == nil && st.IsDir()
}

func (im *importer) scanFlow(flow string) []*artifact {
	byKey := map[artKey]*artifact{}
	var order []artKey
	get := func(k artKey) *artifact {
		if a, ok := byKey[k]; ok {
			return a
		}
		a := &artifact{key: k}
		byKey[k] = a
		order = append(order, k)
		return a
	}
	transcripts := map[string]artKey{}
	llm, _ := fs.ReadDir(im.fsys, path.Join(flow, "llm"))
	for _, e := range llm {
		if e.IsDir() {
			continue
		}
		m := TranscriptName.FindStringSubmatch(e.Name())
		if m == nil {
			im.warn("%s/llm/%s: not a transcript name, skipped", flow, e.Name())
			continue
		}
		k := artKey{flow, m[1], m[2]}
		a := get(k)
		a.transcriptFile = path.Join(flow, "llm", e.Name())
		a.engine = m[3]
		transcripts["llm/"+e.Name()] = k
	}
	recs, _ := fs.ReadDir(im.fsys, path.Join(flow, "receipts"))
	for _, e := range recs {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		rel := path.Join(flow, "receipts", e.Name())
		m := ReceiptName.FindStringSubmatch(e.Name())
		if m == nil {
			im.warn("%s: not a receipt name, skipped", rel)
			continue
		}
		data, err := readSmall(im.fsys, rel)
		var r *Receipt
		if err == nil {
			r, err = ParseReceipt(data)
		}
		if err != nil {
			im.warn("%s: %v; skipped", rel, err)
			continue
		}
		k := artKey{flow, m[1], m[2]}
		if r.StepID != "" && r.AgentKey != "" {
			k = artKey{flow, r.StepID, r.AgentKey}
		}
		if tk, ok := transcripts[filepath.ToSlash(r.TranscriptPath)]; ok && tk != k {
			// The receipt names its transcript; trust it over the file name.
			if a, ok := byKey[tk]; ok && a.receipt == nil {
				delete(byKey, tk)
				for i := range order {
					if order[i] == tk {
						order[i] = k
					}
				}
				a.key = k
				byKey[k] = a
			}
		}
		a := get(k)
		a.receipt, a.receiptFile = r, rel
	}
	out := make([]*artifact, 0, len(order))
	for _, k := range order {
		if a, ok := byKey[k]; ok && a.key == k {
			out = append(out, a)
		}
	}
	return out
}

func (im *importer) artifactStart(a *artifact) time.Time {
	if a.receipt != nil {
		if t, err := ParseTime(a.receipt.StartedAt); err == nil {
			return t
		}
	}
	return im.last
}
