package extract

import "testing"

func TestIsHTML(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		body string
		want bool
	}{
		{"text/html; charset=utf-8", "", true},
		{" Text/HTML", "", true},
		{"application/xhtml+xml", "", true},
		{"image/png", "<html>", false},
		{"text/plain", "<html>", false},
		{"", "<!DOCTYPE html><html><body>x</body></html>", true},
		{"", "\x89PNG\r\n\x1a\n", false},
	} {
		if got := IsHTML(tc.ct, []byte(tc.body)); got != tc.want {
			t.Errorf("IsHTML(%q, %q) = %v, want %v", tc.ct, tc.body, got, tc.want)
		}
	}
}
