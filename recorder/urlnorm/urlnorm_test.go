package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// normalizeCases pin the normalization rules: a change in any of them
// changes recorded traces.
var normalizeCases = []struct {
	in, want string
}{
	// Already canonical.
	{"http://example.com/", "http://example.com/"},
	{"https://example.com/a/b?c=d&e", "https://example.com/a/b?c=d&e"},
	{"http://example.com:8080/x", "http://example.com:8080/x"},
	// Scheme and host case.
	{"HTTP://EXAMPLE.COM/", "http://example.com/"},
	{"HtTpS://Www.Example.Com/Path", "https://www.example.com/Path"},
	// Default ports.
	{"http://example.com:80/", "http://example.com/"},
	{"https://example.com:443/", "https://example.com/"},
	{"http://example.com:443/", "http://example.com:443/"},
	{"https://example.com:80/", "https://example.com:80/"},
	{"http://example.com:0080/", "http://example.com/"},
	{"http://example.com:/", "http://example.com/"},
	// Empty path.
	{"http://example.com", "http://example.com/"},
	{"http://example.com?q", "http://example.com/?q"},
	{"http://example.com#frag", "http://example.com/"},
	// Fragment.
	{"http://example.com/a#b", "http://example.com/a"},
	{"http://example.com/a?q#b", "http://example.com/a?q"},
	{"http://example.com/a#", "http://example.com/a"},
	// Dot segments.
	{"http://example.com/a/./b/../c", "http://example.com/a/c"},
	{"http://example.com/../../a", "http://example.com/a"},
	{"http://example.com/a/..", "http://example.com/"},
	{"http://example.com/a/.", "http://example.com/a/"},
	{"http://example.com/a/%2e%2E/b", "http://example.com/b"},
	{"http://example.com/a/.%2e/b", "http://example.com/b"},
	{"http://example.com/a/%2E/b", "http://example.com/a/b"},
	{"http://example.com/a/..b/c", "http://example.com/a/..b/c"},
	{"http://example.com/a/...", "http://example.com/a/..."},
	// Backslashes and slashes.
	{"http://example.com\\a\\b", "http://example.com/a/b"},
	{"http://example.com//a//b", "http://example.com//a//b"},
	{"http:example.com/a", "http://example.com/a"},
	{"http:/example.com/a", "http://example.com/a"},
	{"http:///example.com/a", "http://example.com/a"},
	// Percent-encoding.
	{"http://example.com/%7euser", "http://example.com/~user"},
	{"http://example.com/%41%42%43%2d%2E%5F", "http://example.com/ABC-._"},
	{"http://example.com/a%2fb", "http://example.com/a%2Fb"},
	{"http://example.com/a%2Fb", "http://example.com/a%2Fb"},
	{"http://example.com/%c3%a9", "http://example.com/%C3%A9"},
	{"http://example.com/é", "http://example.com/%C3%A9"},
	{"http://example.com/a b", "http://example.com/a%20b"},
	{"http://example.com/%zz", "http://example.com/%25zz"},
	{"http://example.com/%", "http://example.com/%25"},
	{"http://example.com/%4", "http://example.com/%254"},
	{"http://example.com/%25", "http://example.com/%25"},
	{"http://example.com/%2525", "http://example.com/%2525"},
	{"http://example.com/?q=%7a%2b", "http://example.com/?q=z%2B"},
	{"http://example.com/?q=a b", "http://example.com/?q=a%20b"},
	{"http://example.com/?q='", "http://example.com/?q=%27"},
	{"http://example.com/'", "http://example.com/'"},
	{"http://example.com/\"<>", "http://example.com/%22%3C%3E"},
	{"http://example.com/`{}", "http://example.com/%60%7B%7D"},
	{"http://example.com/?`{}", "http://example.com/?`{}"},
	{"http://example.com/?a?b/c", "http://example.com/?a?b/c"},
	// Empty query stays distinct.
	{"http://example.com/?", "http://example.com/?"},
	// Whitespace and controls.
	{"  http://example.com/a  ", "http://example.com/a"},
	{"http://exa\tmple.com/a\nb", "http://example.com/ab"},
	{"\x00http://example.com/\x01", "http://example.com/"},
	{"http://example.com/a\x01b", "http://example.com/a%01b"},
	// User info is removed.
	{"http://user:pass@example.com/", "http://example.com/"},
	{"http://user@example.com:8080/", "http://example.com:8080/"},
	{"http://@example.com/", "http://example.com/"},
	// IDN and host forms.
	{"http://bücher.de/", "http://xn--bcher-kva.de/"},
	{"http://BÜCHER.de/", "http://xn--bcher-kva.de/"},
	{"http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"},
	{"http://ex%41mple.com/", "http://example.com/"},
	{"http://例え.jp/", "http://xn--r8jz45g.jp/"},
	{"http://example.com./", "http://example.com./"},
	{"http://a_b.example.com/", "http://a_b.example.com/"},
	{"http://-a-.example.com/", "http://-a-.example.com/"},
	// IP addresses.
	{"http://127.0.0.1/", "http://127.0.0.1/"},
	{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/"},
	{"http://0x7f.1/", "http://127.0.0.1/"},
	{"http://2130706433/", "http://127.0.0.1/"},
	{"http://0177.0.0.1/", "http://127.0.0.1/"},
	{"http://[::1]/", "http://[::1]/"},
	{"http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/"},
	{"http://[2001:DB8::1]/", "http://[2001:db8::1]/"},
	{"http://[::ffff:1.2.3.4]/", "http://[::ffff:102:304]/"},
}

func TestNormalize(t *testing.T) {
	for _, c := range normalizeCases {
		got, err := Normalize(c.in)
		if err != nil {
			t.Errorf("Normalize(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
		// The slow path must agree, and the output must be a fixed point.
		if slow, err := normalizeSlow(c.in); err != nil || slow != got {
			t.Errorf("normalizeSlow(%q) = %q, %v; fast = %q", c.in, slow, err, got)
		}
		if again, err := Normalize(got); err != nil || again != got {
			t.Errorf("Normalize(%q) = %q, %v: not a fixed point", got, again, err)
		}
	}
}

func TestNormalizeErrors(t *testing.T) {
	cases := []struct {
		in   string
		is   error
		want string // substring of the message
	}{
		{"mailto:someone@example.com", ErrUnsupportedScheme, `urlnorm: unsupported scheme "mailto" in "mailto:someone@example.com"`},
		{"javascript:void(0)", ErrUnsupportedScheme, `unsupported scheme "javascript"`},
		{"ftp://example.com/", ErrUnsupportedScheme, `unsupported scheme "ftp"`},
		{"data:text/plain,hi", ErrUnsupportedScheme, `unsupported scheme "data"`},
		{"file:///etc/passwd", ErrUnsupportedScheme, `unsupported scheme "file"`},
		{"/relative/path", ErrInvalid, `urlnorm: invalid URL "/relative/path": missing scheme`},
		{"", ErrInvalid, `urlnorm: invalid URL "": missing scheme`},
		{"example.com", ErrInvalid, "missing scheme"},
		{"http://", ErrInvalid, "does not contain a host"},
		{"http://exa mple.com/", ErrInvalid, "forbidden domain code point"},
		{"http://example.com:99999/", ErrInvalid, "port"},
		{"http://example.com:8x/", ErrInvalid, "port"},
		{"http://[::1/", ErrInvalid, "IPv6"},
		{"http://256.256.256.256/", ErrInvalid, "IPv4"},
		{"http://a{b}.com/", ErrInvalid, `bad host "a{b}.com"`},
		{"http://a*b.com/", ErrInvalid, `bad host`},
		{"http://xn--zz.com/", ErrInvalid, "ToASCII"},
		{"http://" + strings.Repeat("a", 300) + "\x00.com/", ErrInvalid, `"...: `},
	}
	for _, c := range cases {
		got, err := Normalize(c.in)
		if err == nil {
			t.Errorf("Normalize(%q) = %q, want error", c.in, got)
			continue
		}
		if !errors.Is(err, c.is) {
			t.Errorf("Normalize(%q) error %v is not %v", c.in, err, c.is)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) {
			t.Errorf("Normalize(%q) error %q does not contain %q", c.in, msg, c.want)
		}
		if strings.ContainsAny(msg, "\n\r") || len(msg) > 400 {
			t.Errorf("Normalize(%q) error is not one short line: %q", c.in, msg)
		}
	}
}

func TestResolve(t *testing.T) {
	base, _ := url.Parse("http://Example.com:80/dir/page.html?x=1#top")
	cases := []struct{ ref, want string }{
		{"", "http://example.com/dir/page.html?x=1"},
		{"#frag", "http://example.com/dir/page.html?x=1"},
		{"?y=2", "http://example.com/dir/page.html?y=2"},
		{"other.html", "http://example.com/dir/other.html"},
		{"./other.html", "http://example.com/dir/other.html"},
		{"../up.html", "http://example.com/up.html"},
		{"../../../up.html", "http://example.com/up.html"},
		{"/abs/path", "http://example.com/abs/path"},
		{"/abs/%7epath?q", "http://example.com/abs/~path?q"},
		{"/abs/./path", "http://example.com/abs/path"},
		{"//other.org/x", "http://other.org/x"},
		{"\\\\other.org\\x", "http://other.org/x"},
		{"https://Secure.example.com", "https://secure.example.com/"},
		{"http:rel", "http://example.com/dir/rel"},
		{"HTTP://Other.ORG/A", "http://other.org/A"},
		{" spaced.html ", "http://example.com/dir/spaced.html"},
		{"sub/x.html?q=1", "http://example.com/dir/sub/x.html?q=1"},
		{"sub/", "http://example.com/dir/sub/"},
		{"1:x", "http://example.com/dir/1:x"},
		{"a/b:c", "http://example.com/dir/a/b:c"},
		{"sub/./x", "http://example.com/dir/sub/x"},
		{"sub/..", "http://example.com/dir/"},
		{"%7Ex", "http://example.com/dir/~x"},
		{"x.html#frag", "http://example.com/dir/x.html"},
		{"/a#b#c", "http://example.com/a"},
		{"http://o.org/#x y", "http://o.org/"},
		{"./x", "http://example.com/dir/x"},
		{"./../../x?q", "http://example.com/x?q"},
		{"../x/../y", "http://example.com/y"},
		{"..", "http://example.com/"},
		{".", "http://example.com/dir/"},
		{"../", "http://example.com/"},
		{"#", "http://example.com/dir/page.html?x=1"},
		{"a b.html", "http://example.com/dir/a%20b.html"},
	}
	for _, c := range cases {
		got, err := Resolve(base, c.ref)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.ref, err)
			continue
		}
		if got != c.want {
			t.Errorf("Resolve(%q) = %q, want %q", c.ref, got, c.want)
		}
	}
	for _, ref := range []string{"mailto:a@b.c", "javascript:alert(1)", "http://", "tel:+123", "http://a b/"} {
		if got, err := Resolve(base, ref); err == nil {
			t.Errorf("Resolve(%q) = %q, want error", ref, got)
		}
	}
	// A nil base makes Resolve an alias of Normalize.
	if got, err := Resolve(nil, "HTTP://A.COM"); err != nil || got != "http://a.com/" {
		t.Errorf("Resolve(nil, ...) = %q, %v", got, err)
	}
	if _, err := Resolve(&url.URL{Scheme: "mailto", Opaque: "x@y"}, "a"); !errors.Is(err, ErrUnsupportedScheme) {
		t.Errorf("Resolve against a mailto base: %v", err)
	}
}

// TestBaseConcurrent resolves against one Base from many goroutines; run
// with -race.
func TestBaseConcurrent(t *testing.T) {
	b, err := NewBase("http://example.com/a/b/c?q=1")
	if err != nil {
		t.Fatal(err)
	}
	refs := []string{"x", "../y", "?k", "/z", "//o.org/", "#f", "d/e/../f"}
	want := make([]string, len(refs))
	for i, r := range refs {
		want[i], _ = b.Resolve(r)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for n := 0; n < 200; n++ {
				i := n % len(refs)
				if got, err := b.Resolve(refs[i]); err != nil || got != want[i] {
					t.Errorf("Resolve(%q) = %q, %v, want %q", refs[i], got, err, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	if b.String() != "http://example.com/a/b/c?q=1" {
		t.Errorf("base changed: %q", b.String())
	}
}

func TestIsCanonical(t *testing.T) {
	yes := []string{
		"http://example.com/", "https://a.b.c/d/e?f=g&h", "http://localhost:8080/x",
		"http://example.com/%2F%C3%A9", "http://a-b.com/~x/y.html", "http://ab.cd/..x/.y", "http://a.b1/",
	}
	no := []string{
		"http://example.com", "HTTP://example.com/", "http://Example.com/", "http://example.com:80/",
		"https://example.com:443/", "http://example.com:080/", "http://127.0.0.1/", "http://a.1/", "http://a.0x1/",
		"http://example.com/a/../b", "http://example.com/.", "http://example.com/a/..?q",
		"http://example.com/%7e", "http://example.com/%2f", "http://example.com/#f",
		"http://example.com/a b", "http://xn--bcher-kva.de/", "http://a..b/", "http://a.b./",
		"http://u@a.com/", "http://example.com/%", "http://example.com/%2", "http://a.com/'",
		"http://example.com:99999/", "http://example.com:65536/", "mailto:x",
	}
	for _, s := range yes {
		if !isCanonical(s) {
			t.Errorf("isCanonical(%q) = false, want true", s)
		}
	}
	for _, s := range no {
		if isCanonical(s) {
			t.Errorf("isCanonical(%q) = true, want false", s)
		}
	}
}

// TestNormalizeNoAlloc checks that canonical input takes the fast path.
func TestNormalizeNoAlloc(t *testing.T) {
	s := "http://www.example.com/some/path/page.html?id=42&x=y"
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Normalize(s); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Normalize of canonical URL allocates %v times", allocs)
	}
}
