package testweb

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// extract is a deliberately small, test-only link extractor: the tags and
// attributes documented on Link, resolved against the first <base href>
// (or the page URL), fragments dropped, host lower-cased.
func extract(t testing.TB, pageURL string, body []byte) []Link {
	t.Helper()
	base, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	var out []Link
	resolve := func(tag, attr, ref string) {
		u, err := base.Parse(strings.TrimSpace(ref))
		if err != nil {
			t.Errorf("%s: bad reference %q: %v", pageURL, ref, err)
			return
		}
		u.Fragment, u.RawFragment = "", ""
		u.Host = strings.ToLower(u.Host)
		out = append(out, Link{URL: u.String(), Tag: tag, Attr: attr})
	}
	haveBase := false
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("%s: tokenizer: %v", pageURL, z.Err())
			}
			return out
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		attrs := map[string]string{}
		for _, a := range tok.Attr {
			attrs[a.Key] = a.Val
		}
		switch tok.Data {
		case "base":
			if v, ok := attrs["href"]; ok && !haveBase {
				haveBase = true
				base, _ = base.Parse(v)
			}
		case "a", "area", "link":
			if v, ok := attrs["href"]; ok {
				resolve(tok.Data, "href", v)
			}
		case "img":
			if v, ok := attrs["src"]; ok {
				resolve("img", "src", v)
			}
			if v, ok := attrs["srcset"]; ok {
				for _, cand := range strings.Split(v, ",") {
					f := strings.Fields(cand)
					if len(f) > 0 {
						resolve("img", "srcset", f[0])
					}
				}
			}
		case "script", "iframe":
			if v, ok := attrs["src"]; ok {
				resolve(tok.Data, "src", v)
			}
		case "form":
			if v, ok := attrs["action"]; ok {
				resolve("form", "action", v)
			}
		case "meta":
			if strings.EqualFold(attrs["http-equiv"], "refresh") {
				c := attrs["content"]
				if i := strings.Index(strings.ToLower(c), "url="); i >= 0 {
					resolve("meta", "content", c[i+4:])
				}
			}
		}
	}
}

// get serves one request through the handler, addressed by u's host.
func get(t testing.TB, h http.Handler, u string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", u, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// body reads a response body, gunzipping it if needed.
func body(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = z
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
