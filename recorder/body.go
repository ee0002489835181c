package recorder

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"

	"github.com/crawltrace/crawltrace/recorder/extract"
)

// acceptEncoding is sent with every request. Setting it ourselves turns
// off net/http's transparent gzip, so every coding, requested or not, is
// decoded here, under the body cap.
const acceptEncoding = "gzip, deflate, br"

// errEncoding marks a body whose Content-Encoding could not be decoded
// (unknown coding, or a corrupt stream); [Stats.EncodingErrors] counts
// them.
var errEncoding = errors.New("content-encoding")

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

// decodeBody wraps body in decoders for the response's Content-Encoding
// list, last applied first: gzip (x-gzip), deflate (zlib-wrapped, or raw
// as some servers send it), br; identity is skipped. An unknown coding
// is an error wrapping errEncoding. The caller caps what it reads from
// the result, so a compression bomb costs at most the cap.
func decodeBody(h http.Header, body io.Reader) (io.Reader, error) {
	var codings []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	r := body
	for i := len(codings) - 1; i >= 0; i-- {
		switch c := codings[i]; c {
		case "gzip", "x-gzip":
			z, err := gzip.NewReader(r)
			if err != nil {
				return nil, fmt.Errorf("%w: bad gzip stream: %v", errEncoding, err)
			}
			r = z
		case "deflate":
			br := bufio.NewReader(r)
			if b, err := br.Peek(2); err == nil && b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0 {
				z, err := zlib.NewReader(br)
				if err != nil {
					return nil, fmt.Errorf("%w: bad deflate stream: %v", errEncoding, err)
				}
				r = z
			} else {
				r = flate.NewReader(br)
			}
		case "br":
			r = brotli.NewReader(r)
		default:
			return nil, fmt.Errorf("%w: unsupported coding %q", errEncoding, c)
		}
	}
	return r, nil
}

// decodeErr classifies an error met while reading a decoded body: a
// decoder's format error becomes an errEncoding.
func decodeErr(h http.Header, err error) error {
	if err == nil || h.Get("Content-Encoding") == "" || errors.Is(err, errEncoding) {
		return err
	}
	switch {
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, zlib.ErrChecksum),
		errors.Is(err, zlib.ErrHeader), errors.Is(err, zlib.ErrDictionary):
		return fmt.Errorf("%w: %v", errEncoding, err)
	}
	var ce flate.CorruptInputError
	if errors.As(err, &ce) || strings.HasPrefix(err.Error(), "brotli:") {
		return fmt.Errorf("%w: %v", errEncoding, err)
	}
	return err
}
