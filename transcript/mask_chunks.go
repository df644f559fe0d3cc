package transcript

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// maskChunks masks the Chunk of consecutive stream blocks: the chunks of
// one streamed reply, each usually a provider's delta in its own JSON
// shape ({"choices":[{"delta":{"content":"…"}}]}, {"delta":{"text":"…"}}).
// A reply's text runs through the same string member of every chunk, a few
// bytes each, so the strings at one place (the same member path, and the
// same "index" of the objects on the way: a tool call's, a content
// block's) are masked as one text with MaskPieces, and the masked strings
// are spliced back into their chunks, whose other bytes stay as they
// were. A chunk that is not JSON is text of a stream of its own. Object
// keys, and values of secret-named keys, are masked as maskValue masks
// them.
func (m *Masker) maskChunks(chunks []string) []string {
	type ref struct{ chunk, leaf int }
	parsed := make([][]chunkLeaf, len(chunks))
	streams := map[string][]ref{}
	var order []string
	for i, c := range chunks {
		leaves, ok := chunkLeaves(c)
		if !ok {
			leaves = []chunkLeaf{{start: 0, end: len(c), val: c, raw: true, stream: "\x00text"}}
		}
		for k := range leaves {
			l := &leaves[k]
			switch {
			case l.key:
				l.masked = m.MaskString(l.val)
			case l.secretKey && maskableValue(l.val):
				l.masked = Masked
			default:
				l.masked = l.val
				if _, seen := streams[l.stream]; !seen {
					order = append(order, l.stream)
				}
				streams[l.stream] = append(streams[l.stream], ref{i, k})
			}
		}
		parsed[i] = leaves
	}
	for _, key := range order {
		refs := streams[key]
		pieces := make([]string, len(refs))
		for n, r := range refs {
			pieces[n] = parsed[r.chunk][r.leaf].val
		}
		for n, p := range m.MaskPieces(pieces) {
			r := refs[n]
			parsed[r.chunk][r.leaf].masked = p
		}
	}
	out := make([]string, len(chunks))
	for i, c := range chunks {
		var b []byte
		last := 0
		for _, l := range parsed[i] {
			if l.masked == l.val {
				continue
			}
			if b == nil {
				b = make([]byte, 0, len(c))
			}
			b = append(b, c[last:l.start]...)
			if l.raw {
				b = append(b, l.masked...)
			} else {
				b = appendString(b, l.masked)
			}
			last = l.end
		}
		if b == nil {
			out[i] = c
			continue
		}
		out[i] = string(append(b, c[last:]...))
	}
	return out
}

// chunkLeaf is a string of a chunk: c[start:end] is its JSON token (the
// whole chunk when raw), val its value.
type chunkLeaf struct {
	start, end int
	val        string
	masked     string
	raw        bool
	key        bool // an object key
	secretKey  bool // the value of a secret-named key
	// stream names the place of the string in the chunk.
	stream string
}

// chunkNode is an object or array on the way to a string; index is its
// "index" member, when it has a number there.
type chunkNode struct {
	parent *chunkNode
	seg    string
	index  string
}

func (n *chunkNode) path() string {
	var parts []string
	for ; n != nil; n = n.parent {
		parts = append(parts, n.seg+"#"+n.index)
	}
	return strings.Join(parts, "\x00")
}

// chunkLeaves returns the strings of c, a single JSON value, with their
// places; ok is false when c is not one.
func chunkLeaves(c string) (leaves []chunkLeaf, ok bool) {
	dec := json.NewDecoder(strings.NewReader(c))
	dec.UseNumber()
	type frame struct {
		node   *chunkNode
		obj    bool
		key    string // the member being read
		wantK  bool   // an object expecting a key
		n      int    // the next array element
		secret bool   // key says secret
	}
	var stack []frame
	var nodes []*chunkNode // per leaf, its container
	var segs []string      // per leaf, its member or element
	seg := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := &stack[len(stack)-1]
		if f.obj {
			return "." + f.key
		}
		return "[" + strconv.Itoa(f.n) + "]"
	}
	advance := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.obj {
			f.wantK = true
		} else {
			f.n++
		}
	}
	done := false
	for {
		off := int(dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil || done {
			return nil, false
		}
		end := int(dec.InputOffset())
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				var parent *chunkNode
				if len(stack) > 0 {
					parent = stack[len(stack)-1].node
				}
				node := &chunkNode{parent: parent, seg: seg()}
				stack = append(stack, frame{node: node, obj: t == '{', wantK: t == '{'})
			default:
				stack = stack[:len(stack)-1]
				advance()
			}
		case string:
			start := off + strings.IndexByte(c[off:end], '"')
			l := chunkLeaf{start: start, end: end, val: t}
			var container *chunkNode
			if len(stack) > 0 {
				f := &stack[len(stack)-1]
				container = f.node
				if f.obj && f.wantK {
					l.key = true
					f.key, f.wantK, f.secret = t, false, secretName(t)
					leaves = append(leaves, l)
					nodes, segs = append(nodes, container), append(segs, "")
					continue
				}
				l.secretKey = f.obj && f.secret
			}
			leaves = append(leaves, l)
			nodes, segs = append(nodes, container), append(segs, seg())
			advance()
		case json.Number:
			if len(stack) > 0 {
				if f := &stack[len(stack)-1]; f.obj && f.key == "index" {
					f.node.index = t.String()
				}
			}
			advance()
		default:
			advance()
		}
		if len(stack) == 0 {
			done = true
		}
	}
	for k := range leaves {
		if !leaves[k].key {
			leaves[k].stream = nodes[k].path() + "\x00" + segs[k]
		}
	}
	return leaves, true
}
