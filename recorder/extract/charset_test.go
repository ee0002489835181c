package extract

import (
	"encoding/binary"
	"io"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/charmap"
)

// utf16Page returns s in UTF-16 with a byte order mark (encoded with the
// standard library, not with the decoder under test).
func utf16Page(s string, order binary.AppendByteOrder) string {
	var b []byte
	b = order.AppendUint16(b, 0xfeff)
	for _, u := range utf16.Encode([]rune(s)) {
		b = order.AppendUint16(b, u)
	}
	return string(b)
}

// The expected URLs are written out by hand from the WHATWG URL standard:
// the path is UTF-8 percent-encoded, the query is encoded in the page's
// encoding and only its bytes in the special-query percent-encode set are
// percent-encoded. The byte values are those of the code tables: é is
// 0xE9 in windows-1252 and C3 A9 in UTF-8; 日本 is 93 FA 96 7B in
// Shift_JIS, 46 7C 4B 5C in JIS X 0208 (ISO-2022-JP) and E6 97 A5 E6 9C
// AC in UTF-8. Vectors marked WPT are from web-platform-tests'
// url/resources/percent-encoding.json; "URL standard" ones from the
// example table of its "percent-encode after encoding".
func TestPageEncodings(t *testing.T) {
	const D = "http://example.com/dir/"
	latin1 := `<a href="caf` + "\xe9" + `.html?q=` + "\xe9t\xe9" + `">`
	sjis := "\x93\xfa\x96\x7b" // 日本
	cases := []struct {
		name, ct, doc string
		want          []string
		enc           string
		unknown       bool
	}{
		{"latin1 by meta", "text/html", `<meta charset="iso-8859-1">` + latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", false},
		{"latin1 by header", "text/html; charset=ISO-8859-1", latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", false},
		{"latin1 by http-equiv", "", `<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=latin1">` + latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", false},
		{"latin1 sniffed", "text/html", latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", false},
		{"header beats meta", `text/html;charset="windows-1252"`, `<meta charset=utf-8>` + latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", false},
		{"windows-1252", "text/html; charset=windows-1252", "<a href=\"\x93x\x94.html?q=\x80\x93\">",
			[]string{D + "%E2%80%9Cx%E2%80%9D.html?q=%80%93"}, "windows-1252", false},
		{"shift_jis", "text/html; charset=Shift_JIS", `<a href="` + sjis + `.html?q=` + sjis + `">`,
			[]string{D + "%E6%97%A5%E6%9C%AC.html?q=%93%FA%96{"}, "shift_jis", false},
		{"shift_jis by meta, sjis label", "", `<meta charset=sjis><a href="/` + sjis + `">`,
			[]string{"http://example.com/%E6%97%A5%E6%9C%AC"}, "shift_jis", false},
		{"iso-2022-jp", "text/html; charset=iso-2022-jp", "<a href=\"?q=\x1b$BF|K\\\x1b(Bx\">",
			[]string{D + "page.html?q=%1B$BF|K\\%1B(Bx"}, "iso-2022-jp", false},
		{"utf-16le bom", "text/html; charset=windows-1252", utf16Page(`<a href="日本.html?q=é">`, binary.LittleEndian),
			[]string{D + "%E6%97%A5%E6%9C%AC.html?q=%C3%A9"}, "utf-16le", false},
		{"utf-16be bom", "", utf16Page(`<meta charset=shift_jis><a href="caf`+"\u00e9"+`?q=日本">`, binary.BigEndian),
			[]string{D + "caf%C3%A9?q=%E6%97%A5%E6%9C%AC"}, "utf-16be", false},
		{"utf-8 bom beats header", "text/html; charset=windows-1252", "\xef\xbb\xbf<a href=\"caf\xc3\xa9?q=\xc3\xa9\">",
			[]string{D + "caf%C3%A9?q=%C3%A9"}, "utf-8", false},
		{"utf-8 header", "text/html; charset=UTF-8", "<a href=\"caf\xc3\xa9?q=\xc3\xa9\">",
			[]string{D + "caf%C3%A9?q=%C3%A9"}, "utf-8", false},
		{"utf-8 sniffed", "", "<a href=\"caf\xc3\xa9?q=\xc3\xa9\">",
			[]string{D + "caf%C3%A9?q=%C3%A9"}, "utf-8", false},
		{"meta utf-16 means utf-8", "", "<meta charset=utf-16><a href=\"?q=\xc3\xa9\">",
			[]string{D + "page.html?q=%C3%A9"}, "utf-8", false},
		{"meta x-user-defined means windows-1252", "", "<meta charset=x-user-defined><a href=\"?q=\xe9\">",
			[]string{D + "page.html?q=%E9"}, "windows-1252", false},
		{"unknown header", "text/html; charset=x-bogus", "<a href=\"caf\xc3\xa9?q=\xc3\xa9\">",
			[]string{D + "caf%C3%83%C2%A9?q=%C3%A9"}, "windows-1252", true},
		{"unknown meta", "", "<meta charset=utf8mb4><a href=\"caf\xc3\xa9?q=\xc3\xa9\">",
			[]string{D + "caf%C3%83%C2%A9?q=%C3%A9"}, "windows-1252", true},
		{"unknown http-equiv", "", `<meta http-equiv=content-type content="text/html; charset='nope'">` + latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", true},
		{"empty labels declare nothing", "text/html; charset=", `<meta charset=""><meta charset=" ">` + latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", false},
		{"empty label, then an unknown one", "text/html; charset=\"\"", `<meta charset=""><meta charset=nope>` + latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", true},
		{"replacement is not a label", "text/html; charset=replacement", latin1,
			[]string{D + "caf%C3%A9.html?q=%E9t%E9"}, "windows-1252", true},
		{"unknown header, known meta", "text/html; charset=x-bogus", `<meta charset="shift_jis"><a href="?q=` + sjis + `">`,
			[]string{D + "page.html?q=%93%FA%96{"}, "shift_jis", false},
		{"unknown meta, then a known one", "", `<meta charset=bogus><meta charset=sjis><a href="?q=` + sjis + `">`,
			[]string{D + "page.html?q=%93%FA%96{"}, "shift_jis", false},
		{"content without pragma is no declaration", "", `<meta content="charset=shift_jis"><a href="?q=` + sjis + `">`,
			[]string{D + "page.html?q=%93%FA%96{"}, "windows-1252", false},
		{"replacement encoding", "text/html; charset=iso-2022-kr", `<a href="x">`, nil, "replacement", false},
		{"meta past 1024 bytes", "", "<p>" + strings.Repeat("x", 1100) + "<meta charset=utf-8><a href=\"?q=\xc3\xa9\">",
			[]string{D + "page.html?q=%C3%A9"}, "windows-1252", false},
		// WHATWG: a character the encoding lacks is a percent-encoded
		// character reference, in the query only.
		{"unmappable", "text/html; charset=windows-1252", `<a href="&#x65E5;?q=&#x65E5;&eacute;">`,
			[]string{D + "%E6%97%A5?q=%26%2326085%3B%E9"}, "windows-1252", false},
		{"WPT U+2020 windows-1252", "text/html; charset=windows-1252", `<a href="?&#x2020;">`, []string{D + "page.html?%86"}, "windows-1252", false},
		{"WPT U+2020 euc-kr", "text/html; charset=euc-kr", `<a href="?&#x2020;">`, []string{D + "page.html?%A2%D3"}, "euc-kr", false},
		{"WPT U+2020 big5", "text/html; charset=big5", `<a href="?&#x2020;">`, []string{D + "page.html?%26%238224%3B"}, "big5", false},
		{"WPT U+2212 shift_jis", "text/html; charset=shift_jis", `<a href="?&#x2212;">`, []string{D + "page.html?%81|"}, "shift_jis", false},
		{"WPT á| utf-8", "text/html; charset=utf-8", `<a href="?&aacute;|">`, []string{D + "page.html?%C3%A1|"}, "utf-8", false},
		// The URL standard's own examples of "percent-encode after
		// encoding" with Shift_JIS and the special-query set.
		{"URL standard: shift_jis space, ≡, ‽", "text/html; charset=shift_jis", `<a href="?a&#x20;&#x2261;&#x203D;">`,
			[]string{D + "page.html?a%20%81%DF%26%238253%3B"}, "shift_jis", false},
		{"shift_jis yen and overline", "text/html; charset=shift_jis", `<a href="?&#xA5;&#x203E;">`, []string{D + "page.html?\\~"}, "shift_jis", false},
		// The query is what the parser sees: after trimming and tab
		// removal, up to the fragment; every URL attribute and <base>.
		{"fragment and whitespace", "text/html; charset=windows-1252", " <a href=\" x.html?q=\xe9\t\xe9#\xe9 \">",
			[]string{D + "x.html?q=%E9%E9"}, "windows-1252", false},
		{"no query", "text/html; charset=windows-1252", "<a href=\"#?\xe9\"><a href=\"/\xe9#?\xe9\">",
			[]string{D + "page.html", "http://example.com/%C3%A9"}, "windows-1252", false},
		{"base, srcset, refresh", "text/html; charset=windows-1252",
			"<base href=\"/b/?\xe9\"><img srcset=\"i?\xe9 1x\"><meta http-equiv=refresh content=\"0; url=r?\xe9\"><a href=\"\">",
			[]string{"http://example.com/b/?%E9", "http://example.com/b/i?%E9", "http://example.com/b/r?%E9", "http://example.com/b/?%E9"}, "windows-1252", false},
	}
	base, _ := url.Parse(D + "page.html")
	e := NewExtractor()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			st, err := e.Extract(strings.NewReader(c.doc), base, c.ct, func(l Link) { got = append(got, l.URL) })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if st.Encoding != c.enc || st.UnknownCharset != c.unknown {
				t.Errorf("encoding %q unknown %v, want %q %v", st.Encoding, st.UnknownCharset, c.enc, c.unknown)
			}
		})
	}
}

// TestSniffMatchesXNet checks the encoding decision against
// golang.org/x/net/html/charset.DetermineEncoding on pages without an
// unknown label (where the two agree by design).
func TestSniffMatchesXNet(t *testing.T) {
	pages := []struct{ ct, doc string }{
		{"", ""},
		{"", "plain ascii <a href=x>"},
		{"", "caf\xc3\xa9"},
		{"", "caf\xe9"},
		{"text/html", "\xef\xbb\xbfx"},
		{"text/html; charset=utf-8", "\xfe\xffx"},
		{"", "\xff\xfex"},
		{"text/html; charset=shift_jis", "x"},
		{"text/html; charset=\"EUC-KR\"", "<meta charset=big5>"},
		{"text/html", "<meta charset=big5>"},
		{"text/html", "<meta http-equiv=Content-Type content='text/html; charset=gbk'>"},
		{"text/html", "<meta content='text/html; charset=gbk' http-equiv=content-type>"},
		{"text/html", "<meta content='text/html; charset=gbk'>\xc3\xa9"},
		{"text/html", "<meta charset=utf-16le>"},
		{"text/html", "<!-- <meta charset=koi8-r> --><meta charset=iso-8859-5>"},
		{"text/html", "<script>'<meta charset=koi8-r>'</script>"},
		{"text/html", strings.Repeat("\xc3\xa9", 511) + "\xe6\x97"},
		{"text/html", strings.Repeat("x", 1023) + "\xc3\xa9"},
		{"text/html", "<title>x</title><meta charset=windows-1251>"},
	}
	for _, p := range pages {
		_, want, _ := charset.DetermineEncoding([]byte(p.doc), p.ct)
		got := sniffEncoding([]byte(p.doc), p.ct)
		if got.name != want || got.unknown {
			t.Errorf("ct %q doc %.40q: %q (unknown %v), x/net %q", p.ct, p.doc, got.name, got.unknown, want)
		}
	}
}

// TestTranscodedStream: a page in a legacy encoding is decoded as it
// streams; a link far into the page and across the decoder's buffers is
// read whole, and memory does not grow with the page.
func TestTranscodedStream(t *testing.T) {
	base, _ := url.Parse(page)
	e := NewExtractor()
	for _, pad := range []int{4093, 4094, 4095, 4096, 70001} {
		doc := "<meta charset=latin1>" + strings.Repeat("\xe9", pad) + "<a href=\"/\xe9?\xe9\">"
		var got []string
		if _, err := e.Extract(strings.NewReader(doc), base, "", func(l Link) { got = append(got, l.URL) }); err != nil {
			t.Fatal(err)
		}
		if want := []string{"http://example.com/%C3%A9?%E9"}; !slices.Equal(got, want) {
			t.Errorf("pad %d: got %q, want %q", pad, got, want)
		}
	}

	// Memory: decoding adds a bounded amount to what the same page costs
	// as UTF-8, whatever the page's size.
	const size = 16 << 20
	alloc := func(ct string) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		st, err := e.Extract(&latin1Filler{left: size}, base, ct, nil)
		runtime.ReadMemStats(&after)
		if err != nil || st.Links != 0 {
			t.Fatalf("%+v %v", st, err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	plain, decoded := alloc("text/html; charset=utf-8"), alloc("text/html; charset=latin1")
	if decoded > plain+1<<20 {
		t.Errorf("a %d MiB page allocated %d bytes as windows-1252, %d as UTF-8", size>>20, decoded, plain)
	}
}

// latin1Chunk has no link: what the extractor allocates for it does not
// depend on the page's size unless the page is held whole.
const latin1Chunk = "<p class=x>caf\xe9 \xe9t\xe9 <b>\xe9\xe8\xe0</b> text text text text text text text text text text text</p>\n"

// latin1Filler is a windows-1252 page of repeated chunks, made as it is
// read.
type latin1Filler struct{ left, off int }

func (r *latin1Filler) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		c := copy(p[n:min(len(p), n+r.left)], latin1Chunk[r.off:])
		n += c
		r.left -= c
		r.off = (r.off + c) % len(latin1Chunk)
	}
	return n, nil
}

func TestContentTypeCharset(t *testing.T) {
	for _, c := range []struct{ ct, want string }{
		{"text/html", ""},
		{"text/html; charset=UTF-8", "UTF-8"},
		{`text/html;CHARSET="shift_jis"`, "shift_jis"},
		{"text/html; foo; charset= latin1 ", "latin1"},
		{"text/html; a=\"b;c\"; charset=koi8-r", "koi8-r"},
	} {
		if got, _ := contentTypeCharset(c.ct); got != c.want {
			t.Errorf("%q: %q, want %q", c.ct, got, c.want)
		}
	}
}

// singleByteReader decodes as x/text's decoder for the same code table
// does, whatever the sizes of its reads and of the reads it is given.
func TestSingleByteReader(t *testing.T) {
	var all []byte
	for i := range 3 * 256 {
		all = append(all, byte(i*7+i/256))
	}
	src := string(all) + strings.Repeat("plain ascii ", 500) + string(all)
	for _, name := range []string{"windows-1252", "iso-8859-2", "koi8-r", "windows-874", "x-user-defined", "macintosh", "ibm866"} {
		pe, ok := lookupLabel(name)
		cm, isCM := pe.enc.(*charmap.Charmap)
		if !ok || !isCM || !asciiCompatible(cm) {
			t.Fatalf("%s: %v %T", name, ok, pe.enc)
		}
		want, err := pe.enc.NewDecoder().String(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(src)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			var s singleByteReader
			s.reset(r, cm)
			if err := iotest.TestReader(&s, []byte(want)); err != nil {
				t.Errorf("%s (one-byte source %v): %v", name, oneByte, err)
			}
		}
	}
}

// TestTranscoded: a page counts as transcoded only when a non-UTF-8
// reading gave other text than UTF-8 would: a byte outside ASCII in an
// ASCII-compatible encoding, or an encoding that is not ASCII-compatible.
// A pure-ASCII page with no charset is read as windows-1252 and is not.
func TestTranscoded(t *testing.T) {
	long := "<p>" + strings.Repeat("x", 5000) // past the sniffed head and the readers' buffers
	for _, c := range []struct {
		name, ct, doc string
		enc           string
		want          bool
	}{
		{"ascii, no charset", "text/html", `<a href="x">x</a>`, "windows-1252", false},
		{"ascii, declared latin1", "text/html; charset=iso-8859-1", `<a href="x">`, "windows-1252", false},
		{"ascii, declared shift_jis", "text/html; charset=shift_jis", `<a href="x">`, "shift_jis", false},
		{"utf-8", "text/html; charset=utf-8", "<a href=\"\xc3\xa9\">", "utf-8", false},
		{"windows-1252 byte", "text/html", "<a href=\"caf\xe9\">", "windows-1252", true},
		{"windows-1252 byte late", "text/html", long + "\xe9", "windows-1252", true},
		{"shift_jis bytes late", "text/html; charset=shift_jis", long + "\x93\xfa", "shift_jis", true},
		{"utf-16le", "text/html", "\xff\xfe<\x00p\x00>\x00", "utf-16le", true},
		{"replacement", "text/html; charset=iso-2022-kr", `<a href="x">`, "replacement", true},
	} {
		e := NewExtractor()
		st, err := e.ExtractFrom(strings.NewReader(c.doc), "http://example.com/", c.ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Encoding != c.enc || st.Transcoded != c.want {
			t.Errorf("%s: encoding %q transcoded %v, want %q %v", c.name, st.Encoding, st.Transcoded, c.enc, c.want)
		}
	}
}
