package transcript

import "strconv"

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
	for i, c := range chunks {
		leaves, ok := chunkLeaves(c, paths)
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
func chunkLeaves(c string, paths map[nodePlace]string) (leaves []chunkLeaf, ok bool) {
	p := chunkParser{c: c, d: decoder{data: []byte(c)}, leaves: make([]chunkLeaf, 0, 16), nodes: make([]*chunkNode, 0, 16)}
	if err := p.value(nil, "", 0, false, 0); err != nil {
		return nil, false
	}
	if p.d.peek(); p.d.pos != len(p.d.data) {
		return nil, false
	}
	for k := range p.leaves {
		if !p.leaves[k].key {
			p.leaves[k].stream.container = p.nodes[k].key(paths)
		}
	}
	return p.leaves, true
}

// chunkParser reads a chunk's strings with the transcript decoder's
// scanner, which validates the JSON as it goes.
type chunkParser struct {
	c      string
	d      decoder
	leaves []chunkLeaf
	nodes  []*chunkNode // per leaf, its container
}

// str reads the string at the decoder's position.
func (p *chunkParser) str() (chunkLeaf, error) {
	d := &p.d
	start := d.pos
	b, err := d.strBytes()
	if err != nil {
		return chunkLeaf{}, err
	}
	l := chunkLeaf{start: start, end: d.pos}
	if len(b) == d.pos-start-2 {
		l.val = p.c[start+1 : d.pos-1] // no escapes: no copy
	} else {
		l.val = string(b)
	}
	return l, nil
}

// value reads one value, the member (or element elem) of parent.
func (p *chunkParser) value(parent *chunkNode, member string, elem int, secret bool, depth int) error {
	d := &p.d
	if depth > maxDepth {
		return d.fail("nesting too deep")
	}
	switch d.peek() {
	case '"':
		l, err := p.str()
		if err != nil {
			return err
		}
		l.secretKey = secret
		l.stream = streamPlace{member: member, elem: elem}
		p.leaves, p.nodes = append(p.leaves, l), append(p.nodes, parent)
		return nil
	case '{':
		node := &chunkNode{parent: parent, member: member, elem: elem}
		d.pos++
		if d.peek() == '}' {
			d.pos++
			return nil
		}
		for {
			d.ws()
			k, err := p.str()
			if err != nil {
				return err
			}
			k.key = true
			p.leaves, p.nodes = append(p.leaves, k), append(p.nodes, node)
			if d.peek() != ':' {
				return d.fail("expected : after object key")
			}
			d.pos++
			if k.val == "index" && d.peek() != '"' && d.peek() != '{' && d.peek() != '[' {
				num, _, err := d.numberBytes()
				if err != nil {
					if err := d.skip(depth + 1); err != nil {
						return err
					}
				} else {
					node.index = string(num)
				}
			} else if err := p.value(node, k.val, 0, secretName(k.val), depth+1); err != nil {
				return err
			}
			if done, err := d.more('}'); done || err != nil {
				return err
			}
		}
	case '[':
		node := &chunkNode{parent: parent, member: member, elem: elem}
		d.pos++
		if d.peek() == ']' {
			d.pos++
			return nil
		}
		for n := 0; ; n++ {
			if err := p.value(node, "", n, false, depth+1); err != nil {
				return err
			}
			if done, err := d.more(']'); done || err != nil {
				return err
			}
		}
	}
	return d.skip(depth)
}
