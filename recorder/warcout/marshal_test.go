package warcout

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// refDigest is the digest of parts as the archive tools write it, computed
// here apart from the writer's digester.
func refDigest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}

// libraryRecord is the record the writer wrote before it serialized
// records itself: the same fields given to the library's record builder,
// in the same order, marshaled by the library.
func libraryRecord(t *testing.T, typ gowarc.RecordType, fields [][2]string, block []byte) []byte {
	t.Helper()
	rb := gowarc.NewRecordBuilder(typ, gowarc.WithNoValidation(), gowarc.WithBufferMaxMemBytes(1<<30))
	for _, f := range fields {
		rb.AddWarcHeader(f[0], f[1])
	}
	rb.Write(block)
	rec, _, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var b bytes.Buffer
	if _, _, err := gowarc.NewMarshaler().Marshal(&b, rec, 0); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The writer's records, uncompressed, are byte for byte what the library's
// builder and marshaler make of the same fields and blocks (ids and dates
// read back from the file): exchanges with and without an IP, page id and
// truncation, a compressed body, an empty one, one past storeBelow, and a
// start time in another zone with nanoseconds.
func TestHeadMatchesLibrary(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Prefix: "c-node000", Info: [][2]string{{"isPartOf", "c"}, {"http-header-user-agent", "ua/1"}}}
	w := New(o)
	if _, err := w.Restore(nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	w.Start()
	zone := time.FixedZone("x", 5*3600+1800)
	exs := []*Exchange{exchange(0), exchange(1), exchange(2), exchange(3), exchange(4)}
	exs[1].IP, exs[1].PageID, exs[1].Truncated = "", 0, "length"
	exs[2].Compressed, exs[2].Body = true, []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
	exs[3].Body, exs[3].Truncated = nil, "disconnect"
	exs[4].Body = []byte(strings.Repeat("<p>a line of text</p>\n", 100))
	exs[4].Time = time.Date(2026, 11, 27, 22, 3, 4, 123456789, zone)
	exs[4].PageID = 1<<64 - 1
	for _, ex := range exs {
		w.Reserve(ex.Size())
		w.Add(ex)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c-node000-00000"+Suffix)

	// The ids and dates the writer chose, as the library reads them.
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		t.Fatal(err)
	}
	var hdrs []*gowarc.WarcFields
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Validation) > 0 {
			t.Errorf("record %d: %v", len(hdrs), rec.Validation)
		}
		hdrs = append(hdrs, rec.WarcRecord.WarcHeader())
		rec.WarcRecord.Close()
	}
	r.Close()
	if len(hdrs) != 1+2*len(exs) {
		t.Fatalf("%d records, want %d", len(hdrs), 1+2*len(exs))
	}

	var want []byte
	info := hdrs[0]
	var block []byte
	for _, kv := range append([][2]string{{"software", "crawltrace"}, {"format", "WARC File Format 1.1"},
		{"conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}}, o.Info...) {
		block = append(block, kv[0]+": "+kv[1]+"\r\n"...)
	}
	want = append(want, libraryRecord(t, gowarc.Warcinfo, [][2]string{
		{gowarc.WarcDate, info.Get(gowarc.WarcDate)}, {gowarc.WarcFilename, "c-node000-00000" + Suffix},
		{gowarc.ContentType, gowarc.ApplicationWarcFields}, {gowarc.WarcBlockDigest, refDigest(block)},
		{gowarc.ContentLength, strconv.Itoa(len(block))}, {gowarc.WarcRecordID, info.Get(gowarc.WarcRecordID)}}, block)...)
	for i, ex := range exs {
		resp, req := hdrs[1+2*i], hdrs[2+2*i]
		f := [][2]string{{gowarc.WarcRecordID, resp.Get(gowarc.WarcRecordID)}, {gowarc.WarcTargetURI, ex.URL},
			{gowarc.WarcDate, ex.Time.UTC().Format(time.RFC3339Nano)}}
		if ex.IP != "" {
			f = append(f, [2]string{gowarc.WarcIPAddress, ex.IP})
		}
		f = append(f, [2]string{gowarc.WarcWarcinfoID, info.Get(gowarc.WarcRecordID)},
			[2]string{gowarc.WarcConcurrentTo, req.Get(gowarc.WarcRecordID)},
			[2]string{gowarc.ContentType, gowarc.ApplicationHttp + ";msgtype=response"})
		if ex.Truncated != "" {
			f = append(f, [2]string{gowarc.WarcTruncated, ex.Truncated})
		}
		if ex.PageID != 0 {
			f = append(f, [2]string{PageIDField, strconv.FormatUint(ex.PageID, 10)})
		}
		f = append(f, [2]string{gowarc.WarcBlockDigest, refDigest(ex.Response, ex.Body)},
			[2]string{gowarc.WarcPayloadDigest, refDigest(ex.Body)},
			[2]string{gowarc.ContentLength, strconv.Itoa(len(ex.Response) + len(ex.Body))})
		want = append(want, libraryRecord(t, gowarc.Response, f, append(append([]byte(nil), ex.Response...), ex.Body...))...)
		want = append(want, libraryRecord(t, gowarc.Request, [][2]string{
			{gowarc.WarcRecordID, req.Get(gowarc.WarcRecordID)}, {gowarc.WarcTargetURI, ex.URL},
			{gowarc.WarcDate, ex.Time.UTC().Format(time.RFC3339Nano)},
			{gowarc.WarcWarcinfoID, info.Get(gowarc.WarcRecordID)}, {gowarc.WarcConcurrentTo, resp.Get(gowarc.WarcRecordID)},
			{gowarc.ContentType, gowarc.ApplicationHttp + ";msgtype=request"},
			{gowarc.WarcBlockDigest, refDigest(ex.Request)}, {gowarc.WarcPayloadDigest, refDigest()},
			{gowarc.ContentLength, strconv.Itoa(len(ex.Request))}}, ex.Request)...)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the records differ from the library's at byte %d:\ngot  %q\nwant %q", i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
	}
}

// A pinned record head: what the fields of a request record become.
func TestHeadPinned(t *testing.T) {
	var h head
	h.reset("request")
	h.add("WARC-Record-ID", "<urn:uuid:00000000-0000-4000-8000-000000000000>")
	h.addTime("WARC-Date", time.Date(2026, 1, 2, 3, 4, 5, 60000000, time.FixedZone("", -3600)))
	var d digester
	h.addDigest("WARC-Block-Digest", d.of([]byte("GET / HTTP/1.1\r\n"), []byte("\r\n")))
	h.addDigest("WARC-Payload-Digest", emptySum[:])
	h.addUint("Content-Length", 18)
	const want = "WARC/1.1\r\nWARC-Type: request\r\n" +
		"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\n" +
		"WARC-Date: 2026-01-02T04:04:05.06Z\r\n" +
		"WARC-Block-Digest: sha1:HZXZT4LLCPHWK5TQRRYZ7H7BIVEI4ETY\r\n" +
		"WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n" +
		"Content-Length: 18\r\n\r\n"
	if got := string(h.end()); got != want || h.err != nil {
		t.Errorf("head:\n%q, %v\nwant\n%q", got, h.err, want)
	}
	if got := refDigest([]byte("GET / HTTP/1.1\r\n\r\n")); got != "sha1:HZXZT4LLCPHWK5TQRRYZ7H7BIVEI4ETY" {
		t.Errorf("reference digest %s", got)
	}
}

// A field value with a line break (a URL no fetch would take, a
// User-Agent from the command line) fails the write with one error, and
// the writer drops what follows instead of writing a broken record.
func TestLineBreakRefused(t *testing.T) {
	dir := t.TempDir()
	errc := make(chan error, 1)
	w := New(Options{Dir: dir, Prefix: "c-node000", OnError: func(err error) { errc <- err }})
	if _, err := w.Restore(nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	w.Start()
	ex := exchange(0)
	ex.URL = "http://a.test/\r\nWARC-Type: forged"
	w.Reserve(ex.Size())
	w.Add(ex)
	err := w.Close()
	if err == nil || !strings.Contains(err.Error(), "WARC-Target-URI") || !strings.Contains(err.Error(), "line break") {
		t.Fatalf("Close: %v, want the line break named", err)
	}
	if e := <-errc; e != err {
		t.Errorf("OnError got %v, Close %v", e, err)
	}
	if _, records := readAll(t, dir); records != 1 {
		t.Errorf("%d records, want the warcinfo alone", records)
	}
}
