package secrets

import (
	"strconv"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/rawjson"
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
	streams := map[streamPlace][]ref{}
	var order []streamPlace
	// The same few keys and paths come in every chunk.
	keys := map[string]string{}
	paths := map[nodePlace]string{}
	secretKeys := map[string]bool{}
	for i, c := range chunks {
		leaves, ok := chunkLeaves(c, paths, secretKeys)
		if !ok {
			leaves = []chunkLeaf{{start: 0, end: len(c), val: c, raw: true, stream: streamPlace{container: "text"}}}
		}
		for k := range leaves {
			l := &leaves[k]
			switch {
			case l.key:
				mk, ok := keys[l.val]
				if !ok {
					mk = m.MaskString(l.val)
					keys[l.val] = mk
				}
				l.masked = mk
			case l.secretKey:
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
	secretKey  bool // the value of a secret-named key, worth masking
	// stream names the place of the string in the chunk.
	stream streamPlace
}

// streamPlace is where a string sits in a chunk: the path of its
// container, and its member (or element) there.
type streamPlace struct {
	container string
	member    string
	elem      int
}

// chunkNode is an object or array on the way to a string; index is its
// "index" member, when it has a number there.
type chunkNode struct {
	parent *chunkNode
	member string
	elem   int
	index  string
	path   string
	done   bool
}

// nodePlace identifies a node's path from its parent's path; the paths
// of a reply's chunks repeat, and paths keeps each once.
type nodePlace struct {
	parent, member, index string
	elem                  int
}

func (n *chunkNode) key(paths map[nodePlace]string) string {
	if n == nil {
		return ""
	}
	if !n.done {
		pl := nodePlace{parent: n.parent.key(paths), member: n.member, index: n.index, elem: n.elem}
		path, ok := paths[pl]
		if !ok {
			path = pl.parent + "\x00" + n.member + "[" + strconv.Itoa(n.elem) + "]#" + n.index
			paths[pl] = path
		}
		n.path, n.done = path, true
	}
	return n.path
}

// chunkLeaves returns the strings of c, a single JSON value, with their
// places; ok is false when c is not one.
func chunkLeaves(c string, paths map[nodePlace]string, secretKeys map[string]bool) (leaves []chunkLeaf, ok bool) {
	p := chunkParser{c: c, data: []byte(c), leaves: make([]chunkLeaf, 0, 16), nodes: make([]*chunkNode, 0, 16), secretKeys: secretKeys}
	end, err := p.value(0, nil, "", 0, false, 0)
	if err != nil || rawjson.SkipSpace(p.data, end) != len(p.data) {
		return nil, false
	}
	for k := range p.leaves {
		if !p.leaves[k].key {
			p.leaves[k].stream.container = p.nodes[k].key(paths)
		}
	}
	return p.leaves, true
}

// maxDepth bounds the nesting of a chunk the parser descends into.
const maxDepth = 10000

// chunkParser finds a chunk's strings with reel's raw JSON scanner; the
// strings are decoded as encoding/json decodes them (and refused where it
// refuses them), so a chunk it accepts is JSON to every later reader.
type chunkParser struct {
	c    string
	data []byte // c's bytes, for the scanner
	// secretKeys remembers which keys say secret: a reply's chunks repeat
	// the same few.
	secretKeys map[string]bool
	leaves     []chunkLeaf
	nodes      []*chunkNode // per leaf, its container
}

// secretKey reports whether an object key says secret (secretName).
func (p *chunkParser) secretKey(k string) bool {
	secret, ok := p.secretKeys[k]
	if !ok {
		secret = secretName(k)
		p.secretKeys[k] = secret
	}
	return secret
}

// str reads the string whose opening quote is at i.
func (p *chunkParser) str(i int) (chunkLeaf, int, error) {
	j := i + 1
	for j < len(p.c) && p.c[j] != '"' && p.c[j] != '\\' && p.c[j] >= 0x20 {
		j++
	}
	if j < len(p.c) && p.c[j] == '"' && utf8.ValidString(p.c[i+1:j]) {
		// no escapes: no copy
		return chunkLeaf{start: i, end: j + 1, val: p.c[i+1 : j]}, j + 1, nil
	}
	v, end, err := rawjson.Unquote(p.data, i)
	if err != nil {
		return chunkLeaf{}, 0, err
	}
	return chunkLeaf{start: i, end: end, val: v}, end, nil
}

// value reads the value at i, the member (or element elem) of parent, and
// returns where it ends.
func (p *chunkParser) value(i int, parent *chunkNode, member string, elem int, secret bool, depth int) (int, error) {
	if depth > maxDepth {
		return 0, rawjson.ErrSyntax
	}
	i = rawjson.SkipSpace(p.data, i)
	if i >= len(p.data) {
		return 0, rawjson.ErrSyntax
	}
	switch p.data[i] {
	case '"':
		l, end, err := p.str(i)
		if err != nil {
			return 0, err
		}
		l.secretKey = secret && maskableFor(member, l.val)
		l.stream = streamPlace{member: member, elem: elem}
		p.leaves, p.nodes = append(p.leaves, l), append(p.nodes, parent)
		return end, nil
	case '{':
		node := &chunkNode{parent: parent, member: member, elem: elem}
		i = rawjson.SkipSpace(p.data, i+1)
		if i < len(p.data) && p.data[i] == '}' {
			return i + 1, nil
		}
		for {
			i = rawjson.SkipSpace(p.data, i)
			if i >= len(p.data) || p.data[i] != '"' {
				return 0, rawjson.ErrSyntax
			}
			k, end, err := p.str(i)
			if err != nil {
				return 0, err
			}
			k.key = true
			p.leaves, p.nodes = append(p.leaves, k), append(p.nodes, node)
			i = rawjson.SkipSpace(p.data, end)
			if i >= len(p.data) || p.data[i] != ':' {
				return 0, rawjson.ErrSyntax
			}
			i = rawjson.SkipSpace(p.data, i+1)
			if k.val == "index" && i < len(p.data) && (p.data[i] == '-' || '0' <= p.data[i] && p.data[i] <= '9') {
				if end, err = rawjson.Skip(p.data, i); err != nil {
					return 0, err
				}
				node.index = p.c[i:end]
			} else if end, err = p.value(i, node, k.val, 0, p.secretKey(k.val), depth+1); err != nil {
				return 0, err
			}
			var closed bool
			if i, closed, err = p.more(end, '}'); closed || err != nil {
				return i, err
			}
		}
	case '[':
		node := &chunkNode{parent: parent, member: member, elem: elem}
		i = rawjson.SkipSpace(p.data, i+1)
		if i < len(p.data) && p.data[i] == ']' {
			return i + 1, nil
		}
		for n := 0; ; n++ {
			end, err := p.value(i, node, "", n, false, depth+1)
			if err != nil {
				return 0, err
			}
			var closed bool
			if i, closed, err = p.more(end, ']'); closed || err != nil {
				return i, err
			}
		}
	}
	return rawjson.Skip(p.data, i)
}

// more reads the ',' or the closing byte after a member or element at i
// and returns where the next one starts, or where the container ends when
// it is closed.
func (p *chunkParser) more(i int, closing byte) (next int, closed bool, err error) {
	i = rawjson.SkipSpace(p.data, i)
	switch {
	case i >= len(p.data):
		return 0, false, rawjson.ErrSyntax
	case p.data[i] == ',':
		return i + 1, false, nil
	case p.data[i] == closing:
		return i + 1, true, nil
	}
	return 0, false, rawjson.ErrSyntax
}

// appendString appends s to dst as a JSON string, invalid UTF-8 replaced
// by U+FFFD as encoding/json does.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, "\\ufffd"...)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}
