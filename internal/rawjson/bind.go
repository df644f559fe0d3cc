package rawjson

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Binder reads a JSON object into a struct whose exported fields are the
// keys to read: the struct is the field list, so a reader of a provider's
// object declares the fields it wants once instead of a case and an
// assignment per key. Build one per type, once (a package-level
// var x = NewBinder[T]()), and call Bind per object.
//
// A key matches a field when the two are equal ignoring ASCII case and
// underscores: CallID takes call_id, callId and callID, SessionID takes
// session_id and sessionId. Providers spell one name several ways, often
// within one product, and a reader should not have to list them. A tag
// `raw:"name,alias"` gives the names a field takes in place of the one
// derived from its Go name, where a key cannot be derived from a Go name
// or has aliases (raw:"model,selectedModel" on Model); tag names match
// the same way; `raw:"-"` leaves a field unread, for a struct that must
// keep another type's fields (to convert to it) but whose object lacks
// some. Keys are compared as written, escapes unresolved:
// an escaped key matches no field, as no provider escapes its key names.
//
// Field types and how a value is read into them, leniently, since provider
// output must never be refused:
//
//	string     Str: a JSON string decoded; anything else is ""
//	[]byte     the value's raw bytes, sharing data's memory
//	bool       Bool: true only for the literal true
//	int64      Int: a number's integral part; anything else is 0
//	time.Time  Time: an RFC 3339 string, or a positive number of Unix seconds
//
// Any other exported field, or two fields taking one name, is a
// programming error: NewBinder panics, so a package-level Binder stops the
// program at init and any test of its package catches it.
//
// It is not encoding/json because of speed: encoding/json validates and
// decodes every value it walks past and copies what it keeps, where Bind
// skips the values a reader ignores (a memchr over a string) and leaves the
// raw ones in place. The provider normalizers read most bytes of a
// recording this way (their import benchmark runs encoding/json beside
// them: internal/normalize BenchmarkImportFormats).
type Binder[T any] struct {
	// table is an open-addressing hash table of the folded names, sized
	// so that a probe rarely takes a second step; an empty name marks a
	// free slot.
	table []bindField
	shift uint // 32 minus log2(len(table))
	// longest is the longest folded name: a longer key matches nothing
	// and is not folded further.
	longest int
}

type bindField struct {
	name   string // folded: lower case, no underscores
	offset uintptr
	kind   bindKind
}

type bindKind uint8

const (
	bindString bindKind = iota + 1
	bindBytes
	bindBool
	bindInt
	bindTime
)

// maxBindName bounds a folded field name, so a key is folded into a buffer
// on the stack.
const maxBindName = 64

// NewBinder plans the reading of T's exported fields. It panics when T is
// not a struct, when a field's type is not one Binder reads, or when two
// fields take the same name.
func NewBinder[T any]() *Binder[T] {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("rawjson.NewBinder: %v is not a struct", t))
	}
	var fields []bindField
	owner := map[string]string{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		kind := bindKindOf(sf.Type)
		if kind == 0 {
			panic(fmt.Sprintf("rawjson.NewBinder: %v.%s: Binder does not read a %v", t, sf.Name, sf.Type))
		}
		names := []string{sf.Name}
		if tag, ok := sf.Tag.Lookup("raw"); ok {
			if tag == "-" {
				continue
			}
			names = strings.Split(tag, ",")
		}
		for _, n := range names {
			name := foldName(n)
			if name == "" || len(name) > maxBindName {
				panic(fmt.Sprintf("rawjson.NewBinder: %v.%s: bad name %q", t, sf.Name, n))
			}
			if prev, dup := owner[name]; dup {
				panic(fmt.Sprintf("rawjson.NewBinder: %v: %s and %s both take %q", t, prev, sf.Name, n))
			}
			owner[name] = sf.Name
			fields = append(fields, bindField{name: name, offset: sf.Offset, kind: kind})
		}
	}
	b := &Binder[T]{}
	size := 8
	for size < 4*len(fields) {
		size *= 2
	}
	b.table = make([]bindField, size)
	b.shift = uint(32 - bitsOf(size))
	for _, f := range fields {
		b.longest = max(b.longest, len(f.name))
		i := b.slot(f.name[0], f.name[len(f.name)-1], len(f.name))
		for b.table[i].name != "" {
			i = (i + 1) & (len(b.table) - 1)
		}
		b.table[i] = f
	}
	return b
}

func bitsOf(pow2 int) int {
	n := 0
	for pow2 > 1 {
		pow2 >>= 1
		n++
	}
	return n
}

var timeType = reflect.TypeFor[time.Time]()

func bindKindOf(t reflect.Type) bindKind {
	switch {
	case t == timeType:
		return bindTime
	case t.Kind() == reflect.String:
		return bindString
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return bindBytes
	case t.Kind() == reflect.Bool:
		return bindBool
	case t.Kind() == reflect.Int64:
		return bindInt
	}
	return 0
}

// foldName is a name as keys are compared: ASCII letters in lower case,
// underscores dropped.
func foldName(s string) string {
	var sb strings.Builder
	for i := range len(s) {
		if c := s[i]; c != '_' {
			sb.WriteByte(lower(c))
		}
	}
	return sb.String()
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// slot is where a folded name's probe starts: a multiplicative hash of its
// length and its first and last bytes, which tell apart most of the
// names a struct lists; the probe compares whole names.
func (b *Binder[T]) slot(first, last byte, n int) int {
	h := uint32(first) | uint32(last)<<8 | uint32(n)<<16
	return int((h * 0x9E3779B1) >> b.shift)
}

// field returns the field the raw key names, or nil.
func (b *Binder[T]) field(key []byte) *bindField {
	var buf [maxBindName]byte
	n := 0
	for _, c := range key {
		if c == '_' {
			continue
		}
		if n == b.longest {
			return nil
		}
		buf[n] = lower(c)
		n++
	}
	if n == 0 {
		return nil
	}
	name := buf[:n]
	mask := len(b.table) - 1
	for i := b.slot(name[0], name[n-1], n); ; i = (i + 1) & mask {
		f := &b.table[i]
		if f.name == "" {
			return nil
		}
		if f.name == string(name) {
			return f
		}
	}
}

// Bind sets the fields of dst whose keys the object at the start of data
// (leading whitespace allowed) holds, in the object's order, so the last
// of a duplicated key wins; other fields keep their values and unknown
// keys are skipped. It returns the offset just past the object, for a
// caller reading objects that follow one another. On JSON it cannot walk
// it returns ErrSyntax, having set the fields of the members before the
// break.
func (b *Binder[T]) Bind(data []byte, dst *T) (int, error) {
	base := unsafe.Pointer(dst)
	return Members(data, func(key, data []byte, vs int) (int, error) {
		ve, err := Skip(data, vs)
		if err != nil {
			return 0, err
		}
		if f := b.field(key); f != nil {
			f.set(unsafe.Add(base, f.offset), data[vs:ve])
		}
		return ve, nil
	})
}

// set stores the value v in the field at p, which NewBinder checked is of
// f's kind.
func (f *bindField) set(p unsafe.Pointer, v []byte) {
	switch f.kind {
	case bindString:
		*(*string)(p) = Str(v)
	case bindBytes:
		*(*[]byte)(p) = v
	case bindBool:
		*(*bool)(p) = Bool(v)
	case bindInt:
		*(*int64)(p) = Int(v)
	case bindTime:
		*(*time.Time)(p) = Time(v)
	}
}

// Bool reads a JSON boolean leniently: true only for the literal true.
func Bool(v []byte) bool { return string(v) == "true" }

// Int reads a JSON number's integral part (a float is truncated);
// anything else is 0.
func Int(v []byte) int64 {
	if len(v) == 0 {
		return 0
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(string(v), 64); err == nil {
		return int64(f)
	}
	return 0
}

// Time reads a time the way providers write one: an RFC 3339 string, or a
// positive number of Unix seconds. Anything else is the zero time.
func Time(v []byte) time.Time {
	var s string
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 {
		// Parsing keeps nothing of the text, so it reads the input's
		// bytes in place rather than a copy.
		b := v[1 : len(v)-1]
		s = unsafe.String(unsafe.SliceData(b), len(b))
	} else {
		s = Str(v)
	}
	if s == "" {
		if n := Int(v); n > 0 {
			return time.Unix(n, 0).UTC()
		}
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
