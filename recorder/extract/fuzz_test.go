package extract

import (
	"net/url"
	"strings"
	"testing"
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
		f.Add(s)
	}
	base, _ := url.Parse("http://example.com/dir/page.html")
	e := NewExtractor()
	f.Fuzz(func(t *testing.T, doc string) {
		n := 0
		seen := map[string]bool{}
		st, err := e.Extract(strings.NewReader(doc), base, func(l Link) {
			n++
			seen[l.URL] = true
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
		if st.Links != n || st.Unique != len(seen) || st.Skipped < 0 {
			t.Fatalf("stats %+v, emitted %d (%d unique)", st, n, len(seen))
		}
	})
}
