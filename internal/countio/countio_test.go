package countio

import (
	"bytes"
	"errors"
	"testing"
)

// shortWriter takes at most max bytes in all, then fails.
type shortWriter struct {
	buf bytes.Buffer
	max int
}

func (s *shortWriter) Write(p []byte) (int, error) {
	room := s.max - s.buf.Len()
	if len(p) <= room {
		return s.buf.Write(p)
	}
	s.buf.Write(p[:room])
	return room, errors.New("full")
}

func TestWriterCountsWhatTheWriterTook(t *testing.T) {
	sw := &shortWriter{max: 10}
	c := &Writer{W: sw, N: 100}
	if n, err := c.Write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v; want 5, nil", n, err)
	}
	if n, err := c.Write([]byte("world!!")); n != 5 || err == nil {
		t.Fatalf("Write = %d, %v; want 5 and an error", n, err)
	}
	if c.N != 110 {
		t.Fatalf("N = %d, want 110 (100 to start, 10 taken)", c.N)
	}
	if got := sw.buf.String(); got != "helloworld" {
		t.Fatalf("wrote %q", got)
	}
}
