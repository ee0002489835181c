package urlfilter_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/recorder/urlfilter"
)

func Example() {
	cfg := urlfilter.DefaultConfig()
	cfg.AllowedSuffixes = []string{"example.com"}
	f, err := urlfilter.New(cfg)
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"http://www.example.com/index.html",
		"http://example.org/",
		"http://example.com/a/b/a/b/a/b/a/b",
		"ftp://example.com/file",
	} {
		ok, reason := f.Allow(u)
		fmt.Printf("%v %q\n", ok, reason)
	}
	// Output:
	// true ""
	// false "scope"
	// false "repeat"
	// false "scheme"
}
