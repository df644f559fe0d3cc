package plugin

// Verdicts of Verify.
const (
	VerifyPass    = "pass"
	VerifyFail    = "fail"
	VerifyMissing = "missing"
	VerifyUpdated = "updated"
)

// Verdict is an installed plugin's binary checked against the checksum
// stored for it.
type Verdict struct {
	Plugin string `json:"plugin"`
	Binary string `json:"binary"`
	// Status is pass, fail (the binary changed), missing (nothing is
	// stored: the plugin starts unverified) or updated.
	Status string `json:"status"`
	Stored string `json:"stored,omitempty"`
	Actual string `json:"actual,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Verify checks an installed plugin's binary. update stores its current
// checksum instead (the caller saves the state).
func Verify(in *Installed, st *State, update bool) Verdict {
	v := Verdict{Plugin: in.Name, Binary: in.Binary, Stored: st.Checksum(in.Name)}
	sum, err := FileSHA256(in.Binary)
	if err != nil {
		v.Status, v.Error = VerifyFail, err.Error()
		return v
	}
	v.Actual = sum
	switch {
	case update:
		st.SetChecksum(in.Name, sum)
		v.Status = VerifyUpdated
	case v.Stored == "":
		v.Status = VerifyMissing
	case v.Stored == sum:
		v.Status = VerifyPass
	default:
		v.Status = VerifyFail
	}
	return v
}
