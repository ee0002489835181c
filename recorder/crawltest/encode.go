package crawltest

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
)

// Encode returns s compressed with coding: "gzip", "zlib" (HTTP's
// "deflate" as servers send it), "deflate" (raw, as some servers send
// it), or "br". An unknown coding fails the test.
func Encode(t testing.TB, coding string, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zlib":
		w = zlib.NewWriter(&b)
	case "deflate":
		w, _ = flate.NewWriter(&b, flate.BestSpeed)
	case "br":
		w = brotli.NewWriter(&b)
	default:
		t.Fatalf("crawltest: no encoder for %q", coding)
	}
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
