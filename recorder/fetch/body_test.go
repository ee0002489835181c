package fetch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestDecodeBodyErrors: corrupt streams of every coding are encoding
// errors; stacked codings are undone last first.
func TestDecodeBodyErrors(t *testing.T) {
	read := func(coding string, body []byte) (string, error) {
		h := http.Header{}
		h.Set("Content-Encoding", coding)
		r, err := decodeBody(h, bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(r)
		return string(b), decodeErr(h, err)
	}
	for _, tc := range []struct{ coding, body string }{
		{"gzip", "not gzip at all"},
		{"br", "\xff\xff\xff\xff not brotli"},
		{"deflate", "\x78\x9c not zlib"},
		{"deflate", "\xff\xff not deflate"},
		{"compress", "LZW"},
	} {
		if _, err := read(tc.coding, []byte(tc.body)); !errors.Is(err, ErrEncoding) {
			t.Errorf("%s %q: error %v, want an encoding error", tc.coding, tc.body, err)
		}
	}
	// gzip applied first, then br: "gzip, br".
	stacked := crawltest.Encode(t, "br", string(crawltest.Encode(t, "gzip", "<p>twice</p>")))
	if got, err := read("gzip, br", stacked); err != nil || got != "<p>twice</p>" {
		t.Errorf("stacked codings: %q, %v", got, err)
	}
	if got, err := read("identity", []byte("plain")); err != nil || got != "plain" {
		t.Errorf("identity: %q, %v", got, err)
	}
}
