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
	"sync"

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
//
// The gzip, raw-deflate and br decoders and their read buffers are
// reused from one body to the next: a gzip reader alone is about 41 KB,
// ten times a typical page; one per page was 36% of the bytes an 8-node
// crawl of the test web allocated. Close the result when done with it (it
// does not close body): that hands its decoders back, and the result
// must not be read after.
func DecodeBody(h http.Header, body io.Reader) (*Body, error) {
	var codings []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	b := &Body{r: body}
	for i := len(codings) - 1; i >= 0; i-- {
		if err := b.push(codings[i]); err != nil {
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

// Body is a decoded body (see DecodeBody).
type Body struct {
	r    io.Reader
	free []func()
}

func (b *Body) Read(p []byte) (int, error) { return b.r.Read(p) }

// Close hands the body's decoders back for reuse; it does not close the
// body DecodeBody was given.
func (b *Body) Close() error {
	for _, f := range b.free {
		f()
	}
	b.free, b.r = nil, eofReader{}
	return nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Reused decoders. A gzip or flate reader wants an io.ByteReader under
// it, or wraps what it is given in a new bufio.Reader each time, so the
// read buffers are kept too.
var (
	bufPool   = sync.Pool{New: func() any { return bufio.NewReader(nil) }}
	gzipPool  sync.Pool // *gzip.Reader
	flatePool sync.Pool // io.ReadCloser (a flate.Resetter)
	brPool    sync.Pool // *brotli.Reader
)

// buffered is r behind a reused bufio.Reader.
func (b *Body) buffered(r io.Reader) *bufio.Reader {
	br := bufPool.Get().(*bufio.Reader)
	br.Reset(r)
	b.free = append(b.free, func() { br.Reset(nil); bufPool.Put(br) })
	return br
}

// push adds the decoder of coding c on top of b.
func (b *Body) push(c string) error {
	switch c {
	case "gzip", "x-gzip":
		br := b.buffered(b.r)
		z, _ := gzipPool.Get().(*gzip.Reader)
		var err error
		if z == nil {
			z, err = gzip.NewReader(br)
		} else if err = z.Reset(br); err != nil {
			gzipPool.Put(z)
		}
		if err != nil {
			return fmt.Errorf("%w: bad gzip stream: %v", ErrEncoding, err)
		}
		b.free = append(b.free, func() { gzipPool.Put(z) })
		b.r = z
	case "deflate":
		br := b.buffered(b.r)
		if p, err := br.Peek(2); err == nil && p[0]&0x0f == 8 && (uint16(p[0])<<8|uint16(p[1]))%31 == 0 {
			z, err := zlib.NewReader(br)
			if err != nil {
				return fmt.Errorf("%w: bad deflate stream: %v", ErrEncoding, err)
			}
			b.r = z
			return nil
		}
		f, _ := flatePool.Get().(io.ReadCloser)
		if f == nil {
			f = flate.NewReader(br)
		} else {
			f.(flate.Resetter).Reset(br, nil)
		}
		b.free = append(b.free, func() { flatePool.Put(f) })
		b.r = f
	case "br":
		z, _ := brPool.Get().(*brotli.Reader)
		if z == nil {
			z = brotli.NewReader(b.r)
		} else if err := z.Reset(b.r); err != nil {
			brPool.Put(z)
			return fmt.Errorf("%w: bad br stream: %v", ErrEncoding, err)
		}
		b.free = append(b.free, func() { brPool.Put(z) })
		b.r = z
	default:
		return fmt.Errorf("%w: unsupported coding %q", ErrEncoding, c)
	}
	return nil
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
