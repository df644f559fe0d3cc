// Package secrets finds secrets in text and in transcript events and
// replaces them with "[MASKED]". It is the masker a transcript.Recorder
// takes in Options.Masker, and what reel's --mask-secrets applies to the
// transcript, the terminal display, the audit trail, imports, exports and
// replays:
//
//	rec, err := transcript.Create(dir, runID, transcript.Options{
//		Masker: secrets.NewMasker(os.Environ()),
//	})
//
// A Masker knows two kinds of secret. Values: those of the environment
// variables and workflow inputs whose names say secret (NewMasker).
// Shapes: credentials recognisable without knowing them, the checklist
// being the default rules of gitleaks, the widely used secret scanner:
// tokens with a vendor's prefix, JWTs, private key blocks, passwords in
// URLs and on command lines, Authorization headers, and values assigned
// to secret-named keys in every form gitleaks knows (NAME=value, "name":
// "value", YAML, INI, make's ::= and ?=, PHP's .=, Go, XML elements and
// attributes, setProperty("NAME", "value"), a Kubernetes Secret's data).
//
// Shapes are found in one left-to-right scan without regular
// expressions, whose time grows with the length of the text whatever the
// text holds (TestMaskIsLinear). The masker is measured against
// gitleaks' own rule test cases (TestGitleaksRuleCases; the figures are
// in docs/masking.md).
//
// Text that arrives in pieces is masked as the text it makes:
// Masker.MaskPieces for the deltas of a streamed reply (a secret split
// across two deltas is masked in both), LineMasker for output shown a line
// at a time, including lines too long to hold whole (SafeCut, Force).
package secrets
