package workflow

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/errcode"
)

// Problem is one thing wrong with a workflow file.
type Problem struct {
	File string
	Pos  Pos
	Msg  string
	// Warning marks a problem that does not make the file invalid.
	Warning bool
	// Code is AWF's error code for the problem, where it names one
	// (errcode.WorkflowValidationFailed is meant otherwise).
	Code errcode.Code
}

func (p Problem) String() string {
	file := p.File
	if file == "" {
		file = "<workflow>"
	}
	if p.Warning {
		return fmt.Sprintf("%s:%d:%d: warning: %s", file, p.Pos.Line, p.Pos.Col, p.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, p.Pos.Line, p.Pos.Col, p.Msg)
}

// Problems is every problem found in one file, in file order. It is the
// error Load and Parse return when a file is invalid.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Code is the error code of the file's first problem that has one, else
// errcode.WorkflowValidationFailed.
func (ps Problems) Code() errcode.Code {
	for _, p := range ps {
		if !p.Warning && p.Code != "" {
			return p.Code
		}
	}
	return errcode.WorkflowValidationFailed
}

// Errors counts the problems that are not warnings.
func (ps Problems) Errors() int {
	n := 0
	for _, p := range ps {
		if !p.Warning {
			n++
		}
	}
	return n
}

// sorted orders problems by file (in the order files first appear: the
// workflow, then the step templates it uses), then line and column.
func (ps Problems) sorted() Problems {
	rank := map[string]int{}
	for _, p := range ps {
		if _, ok := rank[p.File]; !ok {
			rank[p.File] = len(rank)
		}
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return rank[ps[i].File] < rank[ps[j].File]
		}
		if ps[i].Pos.Line != ps[j].Pos.Line {
			return ps[i].Pos.Line < ps[j].Pos.Line
		}
		return ps[i].Pos.Col < ps[j].Pos.Col
	})
	return ps
}

// didYouMean returns ` (did you mean "X"?)` naming the candidate closest to
// s by edit distance, or "" when none is close enough to be a plausible
// typo, for appending to a problem message.
func didYouMean(s string, candidates []string) string { return DidYouMean(s, candidates) }

// DidYouMean returns ` (did you mean "X"?)` naming the candidate closest to
// s, or "" when none is a plausible typo of it.
func DidYouMean(s string, candidates []string) string {
	if sg := suggest(s, candidates); sg != "" && sg != s {
		return fmt.Sprintf(" (did you mean %q?)", sg)
	}
	return ""
}

// hint matches what DidYouMean appends: a Go-quoted candidate.
var hint = regexp.MustCompile(` \(did you mean "(?:[^"\\]|\\.)*"\?\)`)

// StripHints is msg without the suggestions DidYouMean put in it, for
// users who asked for none (AWF's --no-hints).
func StripHints(msg string) string {
	if !strings.Contains(msg, "(did you mean ") {
		return msg
	}
	return hint.ReplaceAllString(msg, "")
}

func suggest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len(s)/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
