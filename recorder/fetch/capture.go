package fetch

import (
	"io"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Capture is what an archive keeps of one request and its response, as
// [GetCapture] fills it: the request head as sent, the response head as
// received and the body's bytes as they came off the connection (transfer
// coding removed, content coding kept). Its slices are its own.
type Capture struct {
	// Request is the request's head: its request line and header fields
	// (those set here and the Host), ending in a blank line.
	Request []byte
	// Response is the response's status line and header fields, ending
	// in a blank line; empty when no response came.
	Response []byte
	// Body is the body as received, at most the fetch's limit; Truncated
	// says why it is not whole: "length" (cut at the limit, or too long
	// to drain when it was skipped), "disconnect" (the connection failed
	// while it was read), or "" when it is whole.
	Body      []byte
	Truncated string
	// IP is the address of the server that answered ("" when unknown).
	IP string
	// Chunked reports that the response came with chunked transfer
	// coding, removed from Body; its Transfer-Encoding field is left out
	// of Response.
	Chunked bool
	// Encoded reports that Body has a content coding (gzip, br, ...):
	// it is compressed already.
	Encoded bool
}

// Size is how many bytes c holds.
func (c *Capture) Size() int64 { return int64(len(c.Request) + len(c.Response) + len(c.Body)) }

// requestHead renders req's head as an HTTP/1.1 client writes it (field
// order aside: fields are sorted, as [http.Header.Write] writes them).
func requestHead(req *http.Request) []byte {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	uri := req.URL.RequestURI()
	b := make([]byte, 0, len(req.Method)+len(uri)+len(host)+headerSize(req.Header)+32)
	b = append(b, req.Method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	b = appendHeader(b, req.Header)
	return append(b, "\r\n"...)
}

// responseHead renders resp's status line and header fields. A status
// line of HTTP/2 or HTTP/3 is written as net/http gives its protocol
// ("HTTP/2.0 200 OK").
func responseHead(resp *http.Response) []byte {
	status := resp.Status
	if status == "" {
		status = strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	b := make([]byte, 0, len(resp.Proto)+len(status)+headerSize(resp.Header)+8)
	b = append(b, resp.Proto...)
	b = append(b, ' ')
	b = append(b, status...)
	b = append(b, "\r\n"...)
	b = appendHeader(b, resp.Header)
	return append(b, "\r\n"...)
}

// headerSize is about the bytes appendHeader appends for h.
func headerSize(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// appendHeader appends h's fields as [http.Header.Write] writes them:
// keys sorted, fields with an invalid name left out, each value's line
// breaks made spaces and its surrounding blanks trimmed. It builds the
// head in one buffer where Header.Write goes through a bytes.Buffer, a
// pooled sorter and a string replacer per value.
func appendHeader(b []byte, h http.Header) []byte {
	var arr [32]string
	keys := arr[:0]
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			start := len(b)
			b = append(b, textproto.TrimString(v)...)
			for i := start; i < len(b); i++ {
				if b[i] == '\n' || b[i] == '\r' {
					b[i] = ' '
				}
			}
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// captureBody copies what is read of a response body into c, up to max
// bytes (more is counted as cut).
type captureBody struct {
	r   io.ReadCloser
	c   *Capture
	max int64
	cut bool
}

func (cb *captureBody) Read(p []byte) (int, error) {
	n, err := cb.r.Read(p)
	if n > 0 {
		room := cb.max - int64(len(cb.c.Body))
		if room >= int64(n) {
			cb.c.Body = append(cb.c.Body, p[:n]...)
		} else {
			if room > 0 {
				cb.c.Body = append(cb.c.Body, p[:room]...)
			}
			cb.cut = true
		}
	}
	if err != nil && err != io.EOF {
		cb.c.Truncated = "disconnect"
	}
	return n, err
}

func (cb *captureBody) Close() error { return cb.r.Close() }

// startCapture records req and resp in c and wraps resp.Body so that what
// is read of it is kept.
func startCapture(c *Capture, req *http.Request, resp *http.Response, limit int64) *captureBody {
	c.Request = requestHead(req)
	c.Response = responseHead(resp)
	c.Chunked = len(resp.TransferEncoding) > 0 && strings.EqualFold(resp.TransferEncoding[0], "chunked")
	ce := strings.TrimSpace(resp.Header.Get("Content-Encoding"))
	c.Encoded = ce != "" && !strings.EqualFold(ce, "identity")
	c.Body = c.Body[:0]
	if n := resp.ContentLength; n > 0 && n <= limit && int64(cap(c.Body)) < n {
		c.Body = make([]byte, 0, n)
	}
	cb := &captureBody{r: resp.Body, c: c, max: limit}
	resp.Body = cb
	return cb
}

// finish settles Truncated once the body is done with: whole is false when
// it was not read to its end.
func (cb *captureBody) finish(whole bool) {
	if cb == nil {
		return
	}
	if cb.c.Truncated == "" && (cb.cut || !whole) {
		cb.c.Truncated = "length"
	}
}
