package rawjson

import (
	"bytes"
	"unicode/utf8"
)

// Finder finds the string value of one top-level key quickly in lines that
// put that key before any nested object or array, as reel's envelope does
// with "type", "run_id" and "path".
type Finder struct {
	key string
	pat []byte // "key":"
}

// NewFinder returns a Finder for key.
func NewFinder(key string) *Finder {
	return &Finder{key: key, pat: []byte(`"` + key + `":"`)}
}

// String returns the contents of key's string value in the object data,
// unescaped. ok is false when the key is absent or not a string, err when
// the JSON before it is broken. When key comes before any nested value and
// is written without spaces or escapes, it is found with one byte search;
// otherwise the answer comes from Field.
func (f *Finder) String(data []byte) (val []byte, ok bool, err error) {
	i := skipWS(data, 0)
	if i < len(data) && data[i] == '{' {
		if j := bytes.Index(data[i:], f.pat); j > 0 {
			// No '{' or '[' before the match: the match is not inside a
			// nested value, and it cannot be inside a string since
			// strings hold no unescaped quote. It must also start a key.
			head := data[i+1 : i+j]
			if bytes.IndexByte(head, '{') < 0 && bytes.IndexByte(head, '[') < 0 && startsMember(data[i:i+j]) {
				s := i + j + len(f.pat)
				for k := s; k < len(data); k++ {
					switch c := data[k]; {
					case c == '"':
						return data[s:k], true, nil
					case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
						goto slow
					}
				}
			}
		}
	}
slow:
	v, ok, err := Field(data, f.key)
	if !ok || err != nil {
		return nil, ok, err
	}
	str, ok := String(v)
	if !ok {
		return nil, false, nil
	}
	return []byte(str), true, nil
}

// startsMember reports whether the byte after head can start a member: head
// (the object up to the match) ends with '{' or ',' after whitespace.
func startsMember(head []byte) bool {
	for k := len(head) - 1; k >= 0; k-- {
		switch head[k] {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', ',':
			return true
		}
		return false
	}
	return false
}
