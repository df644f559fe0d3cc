package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// Issue 26, item 7: the Authorization scheme is case-insensitive (RFC 9110,
// section 11.1): "bearer" and "BEARER" carry the token as "Bearer" does,
// through the real server.
func TestServeBearerAnyCase(t *testing.T) {
	storage := filepath.Join(t.TempDir(), "st")
	os.MkdirAll(transcript.Dir(storage), 0o700)
	const token = "tok-26-any-case"
	s := serveBinary(t, time.Minute, "--storage", storage, "--token", token)
	for _, c := range []struct {
		auth string
		want int
	}{
		{"Bearer " + token, http.StatusOK},
		{"bearer " + token, http.StatusOK},
		{"BEARER " + token, http.StatusOK},
		{"bEaReR  " + token + " ", http.StatusOK},
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Basic " + token, http.StatusUnauthorized},
		{"Bearer", http.StatusUnauthorized},
		{"Bearer" + token, http.StatusUnauthorized},
	} {
		var headers []string
		if c.auth != "" {
			headers = []string{"Authorization", c.auth}
		}
		if code, body := s.get(t, "/api/runs", headers...); code != c.want {
			t.Errorf("Authorization %q: %d, want %d: %.200s", c.auth, code, c.want, body)
		}
	}
}
