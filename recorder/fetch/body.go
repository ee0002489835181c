package fetch

import (
	"io"
	"net/http"

	"github.com/crawltrace/crawltrace/recorder/extract"
)

// acceptEncoding is sent with every request. Setting it ourselves turns
// off net/http's transparent gzip, so every coding, requested or not, is
// decoded here, under the body cap.
const acceptEncoding = "gzip, deflate, br"

// ErrEncoding marks (wrapped in [Result.Err]) a body whose
// Content-Encoding could not be decoded (unknown coding, or a corrupt
// stream); the recorder's statistics count them. It is extract's, shared
// with the WARC importer.
var ErrEncoding = extract.ErrEncoding

// decodeBody and decodeErr are extract's, shared with the WARC importer.
var (
	decodeBody = extract.DecodeBody
	decodeErr  = extract.DecodeErr
)

// skipBody reports whether a page's body is not worth reading: its
// declared Content-Type is not HTML, so no link will be extracted. An
// absent Content-Type is sniffed from the body, which is then read.
func skipBody(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	return ct != "" && !extract.IsHTML(ct, nil)
}

// drainLimit is the largest skipped body still read (and discarded) so
// that the connection can serve the next request; a longer or unknown
// one is left unread and the connection closed.
const drainLimit = 16 << 10

// discardBody ends a response whose body is skipped. It reports whether
// the connection is lost (the body was not read to its end).
func discardBody(resp *http.Response) (closed bool) {
	if resp.ContentLength >= 0 && resp.ContentLength <= drainLimit {
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit+1))
		resp.Body.Close()
		return err != nil || n > drainLimit
	}
	resp.Body.Close()
	return true
}
