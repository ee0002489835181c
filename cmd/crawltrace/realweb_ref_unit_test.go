package main

import (
	"net/url"
	"slices"
	"testing"
)

// TestRefNormalize pins the real-site test's reference resolver on cases
// worked out by hand from docs/trace-format.md's rules and the WHATWG
// URL standard, the ones the real trees may not hold included.
func TestRefNormalize(t *testing.T) {
	for _, tc := range []struct{ base, ref, want string }{
		{"http://a/b/c", " ../d#x ", "http://a/d"},
		{"http://a/b/", "HTTP://Ex.COM:80/%7euser/%2fx/./y/../z?q=a b'c#f", "http://ex.com/~user/%2Fx/z?q=a%20b%27c"},
		{"https://a/", "//b:0443/x", "https://b/x"},
		{"https://a/", "//b:08443/x", "https://b:8443/x"},
		{"http://a/b/c", "http:d", "http://a/b/d"},
		{"http://a/b", `\x\y?z\w`, `http://a/x/y?z\w`},
		{"http://a/", "a%zz|b^c(d)!.html", "http://a/a%25zz|b^c(d)!.html"},
		{"http://a/x|y/", "z", "http://a/x|y/z"},
		{"http://a/", "caf\u00e9 x{1}.html?\u00e9", "http://a/caf%C3%A9%20x%7B1%7D.html?%C3%A9"},
		{"http://a/", "%2e%2e/%2E/b", "http://a/b"},
		{"http://a/p?q", "", "http://a/p?q"},
		{"http://a/p?q", "#f", "http://a/p?q"},
		{"http://a/p", "?", "http://a/p?"},
		{"http://a/", "http://user:pw@b/", "http://b/"},
		{"http://a/", "http://0x7f.1/", "http://127.0.0.1/"},
		{"http://a/", "http://[::FFFF:1.2.3.4]:80/", "http://[::ffff:102:304]/"},
		{"http://a/", "http://[2001:db8:0:0:1:0:0:1]/", "http://[2001:db8::1:0:0:1]/"},
		{"http://a/", "http://b.example./", "http://b.example./"},
		{"http://a/", "http://b/a/b/c/a/b/c", "http://b/a/b/c/a/b/c"},
		{"http://a/", "http://b", "http://b/"},
		{"http://a/", "HTTP://MÜNCHEN.de/", "http://xn--mnchen-3ya.de/"},
	} {
		got, ok, err := refNormalize(tc.base, tc.ref)
		if err != nil || !ok || got != tc.want {
			t.Errorf("refNormalize(%q, %q) = %q, %v, %v; want %q", tc.base, tc.ref, got, ok, err, tc.want)
		}
	}
	for _, ref := range []string{"mailto:x@y", "javascript:void(0)", "ftp://a/", "http://<s>/", "http://a:99999/",
		"http://1.2.3.256/", "http://a b/", "data:text/html,x"} {
		if got, ok, _ := refNormalize("http://a/", ref); ok {
			t.Errorf("refNormalize(%q) = %q, want no URL", ref, got)
		}
	}
	if _, _, err := refNormalize("http://a/", "x|%7C"); err == nil {
		t.Errorf("a path with both | and %%7C was decided")
	}
}

// TestRefPageLinks: the reference extractor's tags, base, srcset and meta
// refresh, on a page written for it.
func TestRefPageLinks(t *testing.T) {
	page := `<html><head><link rel=stylesheet href="s.css"><meta http-equiv="Refresh" content="5; URL='/next'">
<meta http-equiv=refresh content="7"><base href="/d/"><base href="/ignored/"></head>
<body background=bg.png><!-- <a href="comment.html"> --><script>var a = '<a href="script.html">'</script>
<a href="a.html#top">a</a><A HREF=A2.html>b</A><img src=i.png srcset="i1.png 1x, i,2.png 2x,i3.png">
<form action="f"><button formaction="g">x</button><input type=image src="h.png" formaction="h"></form>
<object data=o.swf></object><q cite="c.html">q</q><video poster=p.jpg src=v.mp4><source src=s.webm srcset="s2.webm"><track src=t.vtt></video>
<iframe src="fr.html"></iframe><area href="ar.html"><a href="mailto:x@y">m</a><a href="">self</a><span href="no.html">
</body></html>`
	got, undecided := refPageLinks("http://h/p/page.html", []byte(page))
	want := []string{"http://h/p/s.css", "http://h/next", "http://h/d/", "http://h/ignored/", "http://h/d/bg.png",
		"http://h/d/a.html", "http://h/d/A2.html", "http://h/d/i.png", "http://h/d/i1.png", "http://h/d/i,2.png", "http://h/d/i3.png",
		"http://h/d/f", "http://h/d/g", "http://h/d/h.png", "http://h/d/h", "http://h/d/o.swf", "http://h/d/c.html",
		"http://h/d/p.jpg", "http://h/d/v.mp4", "http://h/d/s.webm", "http://h/d/s2.webm", "http://h/d/t.vtt",
		"http://h/d/fr.html", "http://h/d/ar.html", "http://h/d/"}
	if !slices.Equal(got, want) || len(undecided) != 0 {
		t.Errorf("links\n%q\nwant\n%q\n(undecided %v)", got, want, undecided)
	}
	if _, err := url.Parse(got[0]); err != nil {
		t.Error(err)
	}
}
