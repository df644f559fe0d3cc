//go:build race

package secrets

// raceEnabled is set when the race detector runs, which makes timing
// meaningless.
const raceEnabled = true
