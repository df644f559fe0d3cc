package runs

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// typeFinder is immutable after construction; reel writes "type" before
// the payload, so one byte search finds it.
var typeFinder = rawjson.NewFinder("type")

// lineType returns the event type of a raw line, without quotes. ok is
// false when the line has no string "type"; err when the JSON before it is
// broken.
func lineType(line []byte) (typ []byte, ok bool, err error) {
	return typeFinder.String(line)
}

// Envelope is the envelope of one line: what every event carries around
// its payload, read from the raw bytes without decoding the payload. Byte
// slices point into the line.
type Envelope struct {
	Seq         uint64
	RunID       string
	ParentRunID string
	ChildRunID  string
	Type        []byte
	Path        []byte
	Iteration   int
	Timestamp   []byte
	Payload     []byte
}

// Parse reads the envelope in one pass over the line. Run ids are kept
// from the previous Parse when unchanged, so a reader going through one
// transcript allocates them once.
func (e *Envelope) Parse(line []byte) error {
	run, parent := e.RunID, e.ParentRunID
	*e = Envelope{}
	var bad error
	seen := 0
	err := rawjson.Each(line, func(k, v []byte) bool {
		switch string(k) {
		case "seq":
			n, ok := count(v)
			if !ok {
				bad = fmt.Errorf("%w: seq %.20s is not a count", transcript.ErrMalformed, v)
				return false
			}
			e.Seq = n
		case "run_id":
			e.RunID = reuse(v, run)
		case "parent_run_id":
			e.ParentRunID = reuse(v, parent)
		case "child_run_id":
			e.ChildRunID, _ = rawjson.String(v)
		case "type":
			seen |= 1
			e.Type = str(v)
		case "path":
			seen |= 2
			if len(v) < 2 || v[0] != '"' {
				bad = fmt.Errorf("%w: path is not a string", transcript.ErrMalformed)
				return false
			}
			e.Path = str(v)
		case "iteration":
			n, err := strconv.Atoi(string(v))
			if err != nil {
				bad = fmt.Errorf("%w: iteration %.20s is not an integer", transcript.ErrMalformed, v)
				return false
			}
			e.Iteration = n
		case "timestamp":
			seen |= 4
			e.Timestamp = str(v)
		case "payload":
			seen |= 8
			e.Payload = v
		}
		return true
	})
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", transcript.ErrMalformed, err)
	case bad != nil:
		return bad
	case seen != 15:
		return fmt.Errorf("%w: missing type, path, timestamp or payload", transcript.ErrMalformed)
	}
	return nil
}

// reuse returns prev when the JSON string v holds it, else v decoded.
func reuse(v []byte, prev string) string {
	if len(v) >= 2 && string(v[1:len(v)-1]) == prev {
		return prev
	}
	s, _ := rawjson.String(v)
	return s
}

// str returns a JSON string's contents: a sub-slice when it has no
// escapes, else a decoded copy.
func str(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	s, _ := rawjson.String(v)
	return []byte(s)
}

// Time parses the timestamp; zero when it is not a time.
func (e *Envelope) Time() time.Time { return ParseTime(e.Timestamp) }

// ParseTime parses a timestamp, quickly for the fixed-width layout reel
// writes (transcript.TimeLayout) and as RFC 3339 otherwise. It returns the
// zero time for anything else.
func ParseTime(b []byte) time.Time {
	if len(b) == len(transcript.TimeLayout) && b[4] == '-' && b[7] == '-' && b[10] == 'T' &&
		b[13] == ':' && b[16] == ':' && b[19] == '.' && b[26] == 'Z' {
		y, ok1 := digits(b[0:4])
		mo, ok2 := digits(b[5:7])
		d, ok3 := digits(b[8:10])
		h, ok4 := digits(b[11:13])
		mi, ok5 := digits(b[14:16])
		s, ok6 := digits(b[17:19])
		us, ok7 := digits(b[20:26])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && s < 61 {
			return time.Date(y, time.Month(mo), d, h, mi, s, us*1000, time.UTC)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}
	}
	return t
}

// count parses an unsigned decimal, refusing what would overflow.
func count(s []byte) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func digits(s []byte) (int, bool) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
