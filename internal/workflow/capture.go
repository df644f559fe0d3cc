package workflow

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Capture is a state's capture: the names under which its stdout and
// stderr are kept in its result. Templates read the output itself as
// .states.NAME.Output and .Stderr, as in AWF, which names the variables but
// exposes no namespace for them.
type Capture struct {
	Stdout string
	Stderr string
	// MaxSize caps each captured value in bytes (0: no cap beyond the
	// engine's output limit).
	MaxSize int64
	Pos     Pos
}

var (
	captureFields = []string{"stdout", "stderr", "max_size", "encoding"}
	captureNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sizeRE        = regexp.MustCompile(`^(\d+)\s*([KMGT]?I?B)?$`)
)

func (l *loader) capture(n *yaml.Node) *Capture {
	fs, ok := l.mapping(n, "capture")
	if !ok {
		return nil
	}
	c := &Capture{Pos: pos(n)}
	for _, f := range fs {
		v := f.val
		switch f.key.Value {
		case "stdout", "stderr":
			name, ok := l.str(v, "capture."+f.key.Value)
			if !ok {
				continue
			}
			if !captureNameRE.MatchString(name) {
				l.errf(v, "capture.%s: %q is not a variable name (letters, digits and _)", f.key.Value, name)
			}
			if f.key.Value == "stdout" {
				c.Stdout = name
			} else {
				c.Stderr = name
			}
		case "max_size":
			c.MaxSize = l.size(v, "capture.max_size")
		case "encoding":
			// AWF accepts the key and ignores it; reel keeps output as
			// UTF-8 text, so only that encoding can be honoured.
			if e, ok := l.str(v, "capture.encoding"); ok {
				if norm := strings.ReplaceAll(strings.ToLower(e), "-", ""); norm != "utf8" {
					l.errf(v, "capture.encoding %q is not supported: captured output is kept as UTF-8 text", e)
				}
			}
		default:
			l.unknownField(f.key, "capture", captureFields, "")
		}
	}
	if c.Stdout == "" && c.Stderr == "" {
		l.errf(n, "capture names no variable (give stdout, stderr or both)")
	}
	if c.Stdout != "" && c.Stdout == c.Stderr {
		l.errf(n, "capture stores stdout and stderr under the same name %q", c.Stdout)
	}
	return c
}

// size reads a byte size: an integer number of bytes, or a number with a
// unit B, KB, MB, GB, TB (binary multiples, as in AWF's config; KiB, MiB,
// ... are accepted as the same).
func (l *loader) size(n *yaml.Node, what string) int64 {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		l.errf(n, "%s must be a size such as 1MB or 512KB, got %s", what, kindName(n))
		return 0
	}
	m := sizeRE.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(n.Value)))
	if m == nil {
		l.errf(n, "%s: %q is not a size (use bytes or a unit: B, KB, MB, GB)", what, n.Value)
		return 0
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	unit := strings.Replace(m[2], "I", "", 1)
	shift := map[string]uint{"": 0, "B": 0, "KB": 10, "MB": 20, "GB": 30, "TB": 40}[unit]
	if err != nil || v > math.MaxInt64>>shift {
		l.errf(n, "%s: %q is too large", what, n.Value)
		return 0
	}
	if v == 0 {
		l.errf(n, "%s must be more than 0 bytes", what)
	}
	return v << shift
}

// Captured returns the captured variables of a finished state from its
// stdout and stderr, each cut at MaxSize (on a UTF-8 boundary).
func (c *Capture) Captured(stdout, stderr string) map[string]string {
	if c == nil {
		return nil
	}
	out := map[string]string{}
	if c.Stdout != "" {
		out[c.Stdout] = c.cut(stdout)
	}
	if c.Stderr != "" {
		out[c.Stderr] = c.cut(stderr)
	}
	return out
}

func (c *Capture) cut(s string) string {
	if c.MaxSize <= 0 || int64(len(s)) <= c.MaxSize {
		return s
	}
	i := int(c.MaxSize)
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}
