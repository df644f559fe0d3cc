package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"gopkg.in/yaml.v3"
)

// flowKeys are the fields that say where a state leads, not what it does:
// a state whose other fields are unchanged produces the same result.
var flowKeys = map[string]bool{
	"on_success": true, "on_failure": true, "on_complete": true,
	"transitions": true, "description": true,
}

// digests fills wf.SHA256 and wf.StateDigests from the file's bytes and
// its parsed document. A state's digest covers what it does (its type,
// command, prompt, options, body, items, …) and leaves its flow fields and
// description out, so a resume can tell a changed step from a rerouted one.
func digests(wf *Workflow, data []byte, root *yaml.Node) {
	sum := sha256.Sum256(data)
	wf.SHA256 = hex.EncodeToString(sum[:])
	wf.StateDigests = map[string]string{}
	if root.Kind == 0 || len(root.Content) == 0 {
		return
	}
	doc := deref(root.Content[0])
	if doc.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if deref(doc.Content[i]).Value != "states" {
			continue
		}
		states := deref(doc.Content[i+1])
		if states.Kind != yaml.MappingNode {
			return
		}
		for j := 0; j+1 < len(states.Content); j += 2 {
			name := deref(states.Content[j]).Value
			if _, ok := wf.States[name]; !ok {
				continue
			}
			if d, ok := stateDigest(states.Content[j+1]); ok {
				wf.StateDigests[name] = d
			}
		}
	}
}

func stateDigest(n *yaml.Node) (string, bool) {
	var v map[string]any
	if err := deref(n).Decode(&v); err != nil {
		return "", false
	}
	for k := range flowKeys {
		delete(v, k)
	}
	// encoding/json sorts map keys: the same definition always gives the
	// same bytes, whatever its key order, quoting or comments in YAML.
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), true
}
