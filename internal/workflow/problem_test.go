package workflow

import "testing"

// StripHints removes exactly what DidYouMean adds, wherever it sits in a
// message, whatever the candidate holds.
func TestStripHints(t *testing.T) {
	for _, candidate := range []string{"done", `we"ird`, `back\slash`, "(did you mean \"x\"?)", "ünï"} {
		h := DidYouMean(candidate+"x", []string{candidate})
		if h == "" {
			t.Fatalf("no hint for %q", candidate)
		}
		for _, msg := range []string{
			"unknown state %q" + h,
			"state %q depends_on: unknown state" + h + " (depends_on orders nothing)",
			"a" + h + " and b" + h,
		} {
			want := map[string]string{
				"unknown state %q" + h: "unknown state %q",
				"state %q depends_on: unknown state" + h + " (depends_on orders nothing)": "state %q depends_on: unknown state (depends_on orders nothing)",
				"a" + h + " and b" + h: "a and b",
			}[msg]
			if got := StripHints(msg); got != want {
				t.Errorf("StripHints(%q) = %q, want %q", msg, got, want)
			}
		}
	}
	if s := `said "did you mean" (not a hint)`; StripHints(s) != s {
		t.Errorf("StripHints changed %q", s)
	}
}
