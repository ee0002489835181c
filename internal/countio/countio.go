// Package countio counts the bytes that pass through a writer, for the
// files whose size a writer reports (the checkpoint, the WARC files)
// without a stat after the fact.
package countio

import "io"

// Writer counts the bytes written through it to W: N is their total,
// counting from N's value when the Writer was made (a file reopened to
// append starts at its size).
type Writer struct {
	W io.Writer
	N int64
}

// Write writes p to W and adds what W took to N.
func (c *Writer) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
