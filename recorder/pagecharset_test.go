package recorder

import (
	"encoding/binary"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestPageCharsets crawls pages in other encodings from a local server and
// reads the URLs they logged from the Arrow URL log. The expected URLs are
// written out by hand from the WHATWG URL standard: the path as UTF-8
// percent-encoded, the query in the page's encoding (bytes outside the
// special-query percent-encode set, like Shift_JIS 本's trail byte 0x7B
// '{', are kept), UTF-16 pages' queries as UTF-8. Byte values: é is 0xE9 in
// windows-1252, € 0x80; 日本 is 93 FA 96 7B in Shift_JIS.
func TestPageCharsets(t *testing.T) {
	const sjisNihon, sjisHon = "\x93\xfa\x96\x7b", "\x96\x7b" // 日本, 本
	latin1 := "<a href=\"caf\xe9.html?q=\xe9t\xe9\">caf\xe9</a>"
	var le []byte
	for _, u := range utf16.Encode([]rune("\ufeff<a href=\"日本.html?q=é\">日本</a>")) {
		le = binary.LittleEndian.AppendUint16(le, u)
	}
	pages := map[string]struct{ ct, coding, body string }{
		"/latin1-meta":   {"text/html", "", "<meta charset=\"iso-8859-1\">" + latin1},
		"/latin1-header": {"text/html; charset=ISO-8859-1", "", latin1},
		"/sjis":          {"text/html", "", "<meta charset=\"Shift_JIS\"><a href=\"" + sjisNihon + ".html?q=" + sjisNihon + "\">x</a>"},
		"/cp1252":        {"text/html; charset=windows-1252", "", "<a href=\"\x80.html?q=\x80\">x</a>"},
		"/utf16":         {"text/html", "", string(le)},
		"/unknown":       {"text/html; charset=x-unknown", "", "<a href=\"caf\xc3\xa9.html?q=\xc3\xa9\">x</a>"},
		"/gzip-sjis":     {"text/html; charset=shift_jis", "gzip", "<a href=\"" + sjisHon + ".html?q=" + sjisHon + "\">x</a>"},
		// No charset, pure ASCII: read as windows-1252, the same text as
		// in UTF-8, so not a page in another encoding.
		"/ascii": {"text/html", "", `<a href="plain.html?q=x">x</a>`},
	}
	const H = "http://enc.test"
	want := map[string][]string{
		H + "/latin1-meta":   {H + "/caf%C3%A9.html?q=%E9t%E9"},
		H + "/latin1-header": {H + "/caf%C3%A9.html?q=%E9t%E9"},
		H + "/sjis":          {H + "/%E6%97%A5%E6%9C%AC.html?q=%93%FA%96{"},
		H + "/cp1252":        {H + "/%E2%82%AC.html?q=%80"},
		H + "/utf16":         {H + "/%E6%97%A5%E6%9C%AC.html?q=%C3%A9"},
		// An unknown charset is read as windows-1252: the UTF-8 bytes of
		// é are the two characters Ã©.
		H + "/unknown":   {H + "/caf%C3%83%C2%A9.html?q=%C3%A9"},
		H + "/gzip-sjis": {H + "/%E6%9C%AC.html?q=%96{"},
		H + "/ascii":     {H + "/plain.html?q=x"},
	}
	var root []string
	for p := range pages {
		root = append(root, p)
	}
	slices.Sort(root)
	v, srv := startVhosts(t, map[string]http.HandlerFunc{"enc.test": func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			for _, l := range root {
				w.Write([]byte(`<a href="` + l + `">x</a>`))
			}
		case ok:
			w.Header().Set("Content-Type", p.ct)
			body := []byte(p.body)
			if p.coding != "" {
				w.Header().Set("Content-Encoding", p.coding)
				body = crawltest.Encode(t, p.coding, p.body)
			}
			w.Write(body)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<p>leaf</p>"))
		}
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), H+"/")
	res := runCrawl(t, cfg)

	pageURL := map[uint64]string{}
	for _, p := range readPages(t, cfg.OutDir, 0) {
		pageURL[p.ID] = p.URL
	}
	got := map[string][]string{}
	for _, u := range readURLs(t, cfg.OutDir) {
		if !utf8.ValidString(u.URL) {
			t.Errorf("logged URL %q is not UTF-8", u.URL)
		}
		if u.Kind == "link" && pageURL[u.Source] != H+"/" {
			got[pageURL[u.Source]] = append(got[pageURL[u.Source]], u.URL)
		}
	}
	for page, w := range want {
		if !slices.Equal(got[page], w) {
			t.Errorf("%s logged %q, want %q", page, got[page], w)
		}
	}
	for page := range got {
		if _, ok := want[page]; !ok {
			t.Errorf("links logged from %s: %q", page, got[page])
		}
	}
	// Each logged URL was requested as logged.
	requests := v.got()
	for _, w := range want {
		if r := "enc.test" + strings.TrimPrefix(w[0], H); !slices.Contains(requests, r) {
			t.Errorf("not requested: %s (requests %q)", r, requests)
		}
	}
	// Every page but the UTF-8 root and leaves and the pure-ASCII page is
	// decoded from another encoding; one declared an unknown charset.
	if s := res.Stats; s.NonUTF8Pages != int64(len(pages)-1) || s.CharsetUnknownPages != 1 {
		t.Errorf("non_utf8_pages %d, charset_unknown_pages %d; want %d, 1", s.NonUTF8Pages, s.CharsetUnknownPages, len(pages)-1)
	}
}
