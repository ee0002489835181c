package extract

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
)

// ErrEncoding marks a body whose Content-Encoding could not be decoded
// (an unknown coding, or a corrupt stream).
var ErrEncoding = errors.New("content-encoding")

// DecodeBody wraps body in decoders for the response's Content-Encoding
// list, last applied first: gzip (x-gzip), deflate (zlib-wrapped, or raw
// as some servers send it), br; identity is skipped. An unknown coding
// is an error wrapping ErrEncoding. The caller caps what it reads from
// the result, so a compression bomb costs at most the cap.
func DecodeBody(h http.Header, body io.Reader) (io.Reader, error) {
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
				return nil, fmt.Errorf("%w: bad gzip stream: %v", ErrEncoding, err)
			}
			r = z
		case "deflate":
			br := bufio.NewReader(r)
			if b, err := br.Peek(2); err == nil && b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0 {
				z, err := zlib.NewReader(br)
				if err != nil {
					return nil, fmt.Errorf("%w: bad deflate stream: %v", ErrEncoding, err)
				}
				r = z
			} else {
				r = flate.NewReader(br)
			}
		case "br":
			r = brotli.NewReader(r)
		default:
			return nil, fmt.Errorf("%w: unsupported coding %q", ErrEncoding, c)
		}
	}
	return r, nil
}

// DecodeErr classifies an error met while reading a decoded body: a
// decoder's format error becomes an ErrEncoding.
func DecodeErr(h http.Header, err error) error {
	if err == nil || h.Get("Content-Encoding") == "" || errors.Is(err, ErrEncoding) {
		return err
	}
	switch {
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, zlib.ErrChecksum),
		errors.Is(err, zlib.ErrHeader), errors.Is(err, zlib.ErrDictionary):
		return fmt.Errorf("%w: %v", ErrEncoding, err)
	}
	var ce flate.CorruptInputError
	if errors.As(err, &ce) || strings.HasPrefix(err.Error(), "brotli:") {
		return fmt.Errorf("%w: %v", ErrEncoding, err)
	}
	return err
}
