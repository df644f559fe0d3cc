package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// bindSample has a field of every kind Binder reads, names derived and
// tagged, and an unexported field Binder must leave alone.
type bindSample struct {
	Type         string `raw:"type,item_type"`
	CallID       string
	SessionID    string
	Errv         []byte `raw:"error"`
	Input        []byte
	IsError      bool
	DurationMS   int64
	Timestamp    time.Time
	Model        string `raw:"model,selectedModel"`
	unexportedID string
}

var sampleFields = NewBinder[bindSample]()

func TestBindFoldsNamesAndTakesAliases(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"call_id":"a"}`, "a"},
		{`{"callId":"b"}`, "b"},
		{`{"callID":"c"}`, "c"},
		{`{"CALL_ID":"d"}`, "d"},
		{`{"c_a_l_l_i_d":"e"}`, "e"},
		{`{"call-id":"x"}`, ""},
		{`{"call_id_":"f"}`, "f"},
		{`{"\u0063all_id":"x"}`, ""}, // keys are compared as written
		{`{"callid2":"x"}`, ""},
	} {
		var s bindSample
		if _, err := sampleFields.Bind([]byte(tc.in), &s); err != nil || s.CallID != tc.want {
			t.Errorf("Bind(%s).CallID = %q, %v; want %q", tc.in, s.CallID, err, tc.want)
		}
	}
	var s bindSample
	in := `{"item_type":"a","selectedModel":"m1","session_id":"s","sessionId":"t","error":{"message":"x"},"unexportedID":"no","unexported_id":"no"}`
	if _, err := sampleFields.Bind([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "a" || s.Model != "m1" || s.SessionID != "t" || string(s.Errv) != `{"message":"x"}` || s.unexportedID != "" {
		t.Errorf("Bind = %+v", s)
	}
	// A tag replaces the derived name: "errv" is no key of Errv.
	s = bindSample{}
	if _, _ = sampleFields.Bind([]byte(`{"errv":1,"type":"t","model":"m2"}`), &s); s.Errv != nil || s.Type != "t" || s.Model != "m2" {
		t.Errorf("tagged names: %+v", s)
	}
}

// A field tagged "-" is never read, whatever the object holds.
func TestBindSkipsDashFields(t *testing.T) {
	type sample struct {
		In   int64
		Skip int64 `raw:"-"`
	}
	b := NewBinder[sample]()
	var s sample
	if _, err := b.Bind([]byte(`{"in":1,"skip":2,"-":3}`), &s); err != nil || s != (sample{In: 1}) {
		t.Errorf("Bind = %+v, %v; want only In", s, err)
	}
}

func TestBindKinds(t *testing.T) {
	in := []byte(` {"type":"a\u2192b\n","input":{"path":"x"} ,"is_error":true,"duration_ms":12.9,` +
		`"timestamp":"2026-06-08T08:14:42.123Z","model":42,"call_id":null,"extra":[1,{"a":"}"}]}  tail`)
	var s bindSample
	end, err := sampleFields.Bind(in, &s)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Index(in, []byte("  tail")); end != want {
		t.Errorf("end = %d, want %d", end, want)
	}
	wantTS := time.Date(2026, 6, 8, 8, 14, 42, 123e6, time.UTC)
	if s.Type != "a\u2192b\n" || string(s.Input) != `{"path":"x"}` || !s.IsError || s.DurationMS != 12 ||
		!s.Timestamp.Equal(wantTS) || s.Model != "" || s.CallID != "" {
		t.Errorf("Bind = %+v", s)
	}
	// []byte shares the input's memory.
	if &s.Input[0] != &in[bytes.Index(in, []byte(`{"path"`))] {
		t.Error("raw value was copied")
	}
	// Lenient kinds: a non-boolean is false, a non-number 0, a number time
	// is Unix seconds, a bad time string the zero time.
	s = bindSample{}
	_, _ = sampleFields.Bind([]byte(`{"is_error":"true","duration_ms":"7","timestamp":1700000000}`), &s)
	if s.IsError || s.DurationMS != 0 || !s.Timestamp.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("lenient kinds: %+v", s)
	}
	s = bindSample{}
	_, _ = sampleFields.Bind([]byte(`{"timestamp":"yesterday"}`), &s)
	if !s.Timestamp.IsZero() {
		t.Errorf("bad time: %v", s.Timestamp)
	}
}

func TestBindDuplicatesAndUnknownKeys(t *testing.T) {
	var s bindSample
	in := `{"type":"first","other":{"type":"inner"},"Type":"second","item_type":"last","callId":"c"}`
	if _, err := sampleFields.Bind([]byte(in), &s); err != nil || s.Type != "last" || s.CallID != "c" {
		t.Errorf("Bind = %+v, %v", s, err)
	}
	// Fields the object has no key for keep their values.
	s = bindSample{SessionID: "kept"}
	if _, err := sampleFields.Bind([]byte(`{}`), &s); err != nil || s.SessionID != "kept" {
		t.Errorf("Bind({}) = %+v, %v", s, err)
	}
}

func TestBindMalformed(t *testing.T) {
	for _, bad := range []string{``, `[]`, `null`, `"s"`, `{"type":"a"`, `{"type" "a"}`, `{"type":"a" "x":1}`, `{type:1}`, `{"type":}`, `{"input":[1,2}`} {
		var s bindSample
		if _, err := sampleFields.Bind([]byte(bad), &s); !errors.Is(err, ErrSyntax) {
			t.Errorf("Bind(%q): %v, want ErrSyntax", bad, err)
		}
	}
	// The members before the break are set, as a reader keeping what it
	// could read of a cut line needs.
	var s bindSample
	if _, err := sampleFields.Bind([]byte(`{"type":"a","call_id":"b","input":{"cut`), &s); err == nil || s.Type != "a" || s.CallID != "b" || s.Input != nil {
		t.Errorf("cut object: %+v, %v", s, err)
	}
	// A comma before the closing brace passes, as it does for Each.
	s = bindSample{}
	if end, err := sampleFields.Bind([]byte(`{"type":"a",}`), &s); err != nil || end != 13 || s.Type != "a" {
		t.Errorf("trailing comma: %d, %v", end, err)
	}
}

// TestBindDoesNotAllocate holds Bind to the allocations of its decoded
// strings' own copies, which reading the keys by hand makes too.
func TestBindDoesNotAllocate(t *testing.T) {
	in := []byte(`{"type":"tool_use","call_id":"call_1","session_id":"s","error":null,"input":{"a":[1,2,3]},` +
		`"is_error":false,"duration_ms":1234,"timestamp":"2026-06-08T08:14:42Z","ignored":"` + strings.Repeat("x", 200) +
		`","a_key_longer_than_any_field_name_it_could_match":1}`)
	var s bindSample
	bind := testing.AllocsPerRun(100, func() {
		s = bindSample{}
		if _, err := sampleFields.Bind(in, &s); err != nil {
			t.Fatal(err)
		}
	})
	// What reading them by hand allocates: a copy of each string value.
	strs := [][]byte{[]byte(`"tool_use"`), []byte(`"call_1"`), []byte(`"s"`)}
	var sink string
	byHand := testing.AllocsPerRun(100, func() {
		for _, v := range strs {
			sink = Str(v)
		}
	})
	_ = sink
	if bind > byHand {
		t.Errorf("Bind allocates %v times per object, reading by hand %v", bind, byHand)
	}
	type rawOnly struct {
		Type, Input []byte
		IsError     bool
		DurationMS  int64
		Timestamp   time.Time
	}
	rawFields := NewBinder[rawOnly]()
	var r rawOnly
	if n := testing.AllocsPerRun(100, func() { _, _ = rawFields.Bind(in, &r) }); n != 0 {
		t.Errorf("Bind into raw, bool, int and time fields allocates %v times", n)
	}
	if s.Type != "tool_use" || s.CallID != "call_1" || s.DurationMS != 1234 || string(r.Type) != `"tool_use"` {
		t.Errorf("Bind = %+v, %+v", s, r)
	}
}

func TestNewBinderRefusesWhatItCannotRead(t *testing.T) {
	for name, build := range map[string]func(){
		"not a struct": func() { NewBinder[map[string]string]() },
		"int field":    func() { NewBinder[struct{ N int }]() },
		"float field":  func() { NewBinder[struct{ F float64 }]() },
		"slice field":  func() { NewBinder[struct{ S []string }]() },
		"struct field": func() { NewBinder[struct{ U struct{ A string } }]() },
		"same name": func() {
			NewBinder[struct {
				CallID string
				Callid []byte
			}]()
		},
		"alias taken": func() {
			NewBinder[struct {
				Type     string
				ItemType string `raw:"item_type,type"`
			}]()
		},
		"empty tag name": func() {
			NewBinder[struct {
				A string `raw:"a,"`
			}]()
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewBinder did not panic", name)
				}
			}()
			build()
		}()
	}
	// Unexported fields of any type are not its business.
	NewBinder[struct {
		A string
		m map[string]int
	}]()
}

// bindReference is Bind as its doc comment says it, the slow way: Each
// over the object, each key folded and looked up among the fields by
// reflection.
func bindReference(data []byte, dst *bindSample) error {
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	return Each(data, func(key, val []byte) bool {
		k := foldName(string(key))
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			names := []string{sf.Name}
			if tag, ok := sf.Tag.Lookup("raw"); ok {
				names = strings.Split(tag, ",")
			}
			for _, n := range names {
				if foldName(n) != k {
					continue
				}
				f := v.Field(i)
				switch f.Interface().(type) {
				case string:
					f.SetString(Str(val))
				case []byte:
					f.SetBytes(val)
				case bool:
					f.SetBool(string(val) == "true")
				case int64:
					f.SetInt(Int(val))
				case time.Time:
					f.Set(reflect.ValueOf(Time(val)))
				}
			}
		}
		return true
	})
}

// FuzzBind checks Bind against the reference reading, its end against
// Members', and that it reads every object encoding/json accepts.
func FuzzBind(f *testing.F) {
	for _, s := range []string{
		`{"type":"a","callId":"b","input":{"x":[1,"}"]},"is_error":true,"duration_ms":3,"timestamp":"2026-01-02T03:04:05Z"}`,
		`{"item_type":"x","type":"y","CALL_ID":"\u00e9\ud800","error":"e","selectedModel":null} {"next":1}`,
		`{"type":"a",}`, `{"type":"a"`, `[1]`, `{"\u0074ype":1}`, "{\"input\":\"\x00\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var got, want bindSample
		end, err := sampleFields.Bind(in, &got)
		wantErr := bindReference(in, &want)
		mEnd, mErr := Members(in, func(k, d []byte, vs int) (int, error) { return Skip(d, vs) })
		if (err == nil) != (mErr == nil) || err == nil && end != mEnd {
			t.Fatalf("Bind(%q) = %d, %v; Members %d, %v", in, end, err, mEnd, mErr)
		}
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("Bind(%q) = %+v, %v; reference %+v, %v", in, got, err, want, wantErr)
		}
		if err != nil && json.Valid(in) && bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("{")) {
			t.Fatalf("Bind(%q): %v on valid JSON", in, err)
		}
	})
}
