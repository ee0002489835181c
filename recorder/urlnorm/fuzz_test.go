package urlnorm

import (
	"net/url"
	"strings"
	"testing"
)

func FuzzNormalize(f *testing.F) {
	for _, c := range normalizeCases {
		f.Add(c.in)
	}
	for _, s := range []string{"mailto:x", "http://[::1", "http://a.com/%zz%", "http://a.com:65535/", "http://xn--a.com/", "a:b", "1:x", "a/b:c", "rel/x?y", "/abs?q", "x/..", "./x", "../../a#b", "#x", "./../x", "a#\x00"} {
		f.Add(s)
	}
	var bases []*Base
	for _, s := range []string{"http://example.com/dir/page?x=1", "https://a.org:8443/", "http://h.net//x/y/", "http://h.net/a/b/c/d/e"} {
		b, err := NewBase(s)
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, b)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Normalize(in)
		slow, slowErr := normalizeSlow(in)
		if isCanonical(in) && (slowErr != nil || slow != in) {
			t.Fatalf("fast path accepts %q but the parser gives %q, %v", in, slow, slowErr)
		}
		if got != slow || (err == nil) != (slowErr == nil) {
			t.Fatalf("Normalize(%q) = %q, %v; slow = %q, %v", in, got, err, slow, slowErr)
		}
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "urlnorm: ") {
				t.Fatalf("bad error message %q", msg)
			}
		} else {
			checkCanonical(t, in, got)
		}

		for _, base := range bases {
			r, err := base.Resolve(in)
			rs, rsErr := base.resolveSlow(in)
			if r != rs || (err == nil) != (rsErr == nil) {
				t.Fatalf("%s: Resolve(%q) = %q, %v; slow = %q, %v", base, in, r, err, rs, rsErr)
			}
			if err == nil {
				checkCanonical(t, in, r)
			}
		}
	})
}

// checkCanonical checks that out, the normalization of in, parses with
// net/url, is http(s) and is a fixed point.
func checkCanonical(t *testing.T, in, out string) {
	t.Helper()
	u, err := url.Parse(out)
	if err != nil {
		t.Fatalf("output %q of %q does not parse with net/url: %v", out, in, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		t.Fatalf("output %q of %q has scheme %q", out, in, u.Scheme)
	}
	if u.Host == "" || u.Fragment != "" || u.User != nil {
		t.Fatalf("output %q of %q: host %q fragment %q user %v", out, in, u.Host, u.Fragment, u.User)
	}
	again, err := normalizeSlow(out)
	if err != nil || again != out {
		t.Fatalf("not a fixed point: %q -> %q -> %q, %v", in, out, again, err)
	}
}
