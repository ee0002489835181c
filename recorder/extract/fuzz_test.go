package extract

import (
	"encoding/binary"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		genPage(10),
		`<a href="x"><base href="/b/"><img srcset="a 1x, b,c 2x">`,
		`<meta http-equiv=refresh content="0; url='/n'">`,
		`<a href='unterminated`,
		`<script><a href="no"></script><!-- <a href=no> -->`,
		`<A HREF="&#x2F;&amp;x">`,
	} {
		f.Add(s, "")
	}
	// Pages in other encodings, declared by header, meta or BOM.
	latin1 := "<a href=\"caf\xe9.html?q=\xe9t\xe9#\xe9\">"
	sjis := "<a href=\"\x93\xfa\x96\x7b.html?q=\x93\xfa\x96\x7b&#x2020;\">"
	for _, s := range [][2]string{
		{"<meta charset=iso-8859-1>" + latin1, ""},
		{latin1, "text/html; charset=ISO-8859-1"},
		{"<meta http-equiv=content-type content='text/html;charset=shift_jis'>" + sjis, ""},
		{sjis, "text/html; charset=shift_jis"},
		{"<a href=\"?q=\x1b$BF|K\\\x1b(B\">", "text/html; charset=iso-2022-jp"},
		{"<base href=\"?\xa4\">" + latin1, "text/html; charset=euc-kr"},
		{utf16Page(`<a href="日本.html?q=é">`, binary.LittleEndian), ""},
		{utf16Page(`<a href="日本.html?q=é">`, binary.BigEndian), "text/html; charset=latin1"},
		{latin1, "text/html; charset=x-unknown"},
	} {
		f.Add(s[0], s[1])
	}
	base, _ := url.Parse("http://example.com/dir/page.html")
	e := NewExtractor()
	f.Fuzz(func(t *testing.T, doc, ct string) {
		n := 0
		seen := map[string]bool{}
		st, err := e.Extract(strings.NewReader(doc), base, ct, func(l Link) {
			n++
			seen[l.URL] = true
			if !utf8.ValidString(l.URL) {
				t.Fatalf("emitted %q is not UTF-8", l.URL)
			}
			if again, err := urlnorm.Normalize(l.URL); err != nil || again != l.URL {
				t.Fatalf("emitted %q normalizes to %q, %v", l.URL, again, err)
			}
			u, err := url.Parse(l.URL)
			if err != nil {
				t.Fatalf("emitted %q does not parse: %v", l.URL, err)
			}
			if u.Scheme != "http" && u.Scheme != "https" {
				t.Fatalf("emitted %q has scheme %q", l.URL, u.Scheme)
			}
			if l.Tag == "" || strings.ToLower(l.Tag) != l.Tag {
				t.Fatalf("bad tag %q", l.Tag)
			}
		})
		if err != nil {
			t.Fatalf("Extract: %v", err)
		}
		if st.Encoding == "" {
			t.Fatalf("no encoding in %+v", st)
		}
		if st.Links != n || st.Unique != len(seen) || st.Skipped < 0 {
			t.Fatalf("stats %+v, emitted %d (%d unique)", st, n, len(seen))
		}
	})
}
