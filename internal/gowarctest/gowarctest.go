// Package gowarctest reads WARC files back with gowarc, the library
// crawl --warc writes them with, strictly, for the tests of the writer
// (recorder/warcout) and of the command. It is a test helper: only
// _test.go files import it.
package gowarctest

import (
	"errors"
	"io"
	"testing"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// Each reads every record of files, in order, with strict validation,
// and calls fn with each record, which it closes when fn returns. A file that cannot be read to its end fails t; a record
// with a validation finding is an error of t.
func Each(t testing.TB, files []string, fn func(rec gowarc.WarcRecord)) {
	t.Helper()
	for _, name := range files {
		r, err := gowarc.NewWarcFileReader(name, 0, gowarc.WithStrictValidation())
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				t.Fatalf("%s: %v", name, err)
			}
			if len(rec.Validation) > 0 {
				t.Errorf("%s: %v", name, rec.Validation)
			}
			fn(rec.WarcRecord)
			rec.WarcRecord.Close()
		}
		r.Close()
	}
}
