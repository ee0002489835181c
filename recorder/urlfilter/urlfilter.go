// Package urlfilter is the crawler's URL filter, the stage between link
// extraction and the host splitter (Mercator's "URL filter"): syntactic
// rules that keep a crawl in scope and out of crawler traps.
//
// A URL is checked against the rules in this order; the first that fails
// names the reason:
//
//	"scheme"  the URL does not start with "http://" or "https://"
//	"length"  the URL is longer than MaxURLLength bytes
//	"scope"   AllowedSuffixes is not empty and the host name (lower-case, port
//	          and a trailing dot removed) is none of them and ends in none of
//	          "." + suffix ("example.com" allows example.com and
//	          www.example.com, not badexample.com)
//	"depth"   the path has more than MaxPathDepth non-empty segments
//	          ("/a/b/c.html" has 3, "/" has 0, "/a//b/" has 2)
//	"repeat"  a non-empty path segment occurs more than MaxRepeatedSegment
//	          times in the path ("/a/b/a/b/a/b/a/" with limit 3), the
//	          signature of relative-link loops
//	"regex"   Regex is set and does not match anywhere in the URL
//	          (Go RE2 syntax; anchor it with ^...$ to match the whole URL)
//
// Allow expects a URL normalized by recorder/urlnorm; it does not parse
// with net/url and does not allocate.
package urlfilter

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/crawltrace/crawltrace/recorder/partition"
)

// Config configures a Filter. Zero numeric fields take the defaults;
// negative ones disable the rule.
type Config struct {
	AllowedSuffixes    []string // host suffixes in scope ("example.com" matches example.com and *.example.com); empty = all
	Regex              string   // optional: URL must match
	MaxURLLength       int      // default 2048
	MaxPathDepth       int      // default 16 path segments
	MaxRepeatedSegment int      // a path segment repeated more than this many times -> trap (default 3)
}

// Defaults of the numeric Config fields.
const (
	DefaultMaxURLLength       = 2048
	DefaultMaxPathDepth       = 16
	DefaultMaxRepeatedSegment = 3
)

// DefaultConfig returns the defaults: every host in scope, no regex.
func DefaultConfig() Config {
	return Config{
		MaxURLLength:       DefaultMaxURLLength,
		MaxPathDepth:       DefaultMaxPathDepth,
		MaxRepeatedSegment: DefaultMaxRepeatedSegment,
	}
}

// Filter decides which URLs the crawler follows. It is read-only after New
// and safe for concurrent use.
type Filter struct {
	suffixes  []string
	re        *regexp.Regexp
	maxLen    int
	maxDepth  int
	maxRepeat int
}

// New validates c and returns its Filter.
func New(c Config) (*Filter, error) {
	f := &Filter{
		maxLen:    orDefault(c.MaxURLLength, DefaultMaxURLLength),
		maxDepth:  orDefault(c.MaxPathDepth, DefaultMaxPathDepth),
		maxRepeat: orDefault(c.MaxRepeatedSegment, DefaultMaxRepeatedSegment),
	}
	for _, s := range c.AllowedSuffixes {
		s = strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "."), ".")
		s = strings.TrimPrefix(s, "*.")
		bad := strings.ContainsAny(s, "/?#@ ") || (strings.Contains(s, ":") && !strings.HasPrefix(s, "["))
		if s == "" || bad {
			return nil, fmt.Errorf("urlfilter: bad allowed suffix %q: want a host name like example.com", s)
		}
		f.suffixes = append(f.suffixes, s)
	}
	if c.Regex != "" {
		re, err := regexp.Compile(c.Regex)
		if err != nil {
			return nil, fmt.Errorf("urlfilter: bad regex %q: %v", c.Regex, err)
		}
		f.re = re
	}
	return f, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Allow reports whether u (a normalized URL string) passes; reason names
// the rule that rejected it ("scheme", "scope", "regex", "length", "depth",
// "repeat") and is "" when ok.
func (f *Filter) Allow(u string) (ok bool, reason string) {
	var rest string
	switch {
	case strings.HasPrefix(u, "http://"):
		rest = u[7:]
	case strings.HasPrefix(u, "https://"):
		rest = u[8:]
	default:
		return false, "scheme"
	}
	if f.maxLen >= 0 && len(u) > f.maxLen {
		return false, "length"
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	path := rest[end:]
	if len(f.suffixes) > 0 && !f.inScope(partition.HostOf(u)) {
		return false, "scope"
	}
	if q := strings.IndexAny(path, "?#"); q >= 0 {
		path = path[:q]
	}
	if f.maxDepth >= 0 && depth(path) > f.maxDepth {
		return false, "depth"
	}
	if f.maxRepeat >= 0 && repeated(path, f.maxRepeat) {
		return false, "repeat"
	}
	if f.re != nil && !f.re.MatchString(u) {
		return false, "regex"
	}
	return true, ""
}

func (f *Filter) inScope(host string) bool {
	for _, s := range f.suffixes {
		if host == s || (len(host) > len(s) && host[len(host)-len(s)-1] == '.' && host[len(host)-len(s):] == s) {
			return true
		}
	}
	return false
}

// depth counts the non-empty segments of path.
func depth(path string) int {
	n := 0
	for i := 0; i < len(path); i++ {
		if path[i] != '/' && (i == 0 || path[i-1] == '/') {
			n++
		}
	}
	return n
}

// repeated reports whether some non-empty segment of path occurs more than
// limit times.
func repeated(path string, limit int) bool {
	if depth(path) <= limit {
		return false
	}
	for p := path; p != ""; {
		seg, rest := nextSegment(p)
		p = rest
		if seg == "" {
			continue
		}
		n := 1
		for q := rest; q != ""; {
			s, r := nextSegment(q)
			q = r
			if s == seg {
				n++
				if n > limit {
					return true
				}
			}
		}
	}
	return false
}

// nextSegment splits off the first segment of p, skipping a leading '/'.
func nextSegment(p string) (seg, rest string) {
	p = strings.TrimPrefix(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}
