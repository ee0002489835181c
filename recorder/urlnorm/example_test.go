package urlnorm_test

import (
	"fmt"
	"net/url"

	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

func Example() {
	s, _ := urlnorm.Normalize("HTTP://User@Example.COM:80/a/./b/../%7euser/%c3%a9?q=1#top")
	fmt.Println(s)

	base, _ := url.Parse("http://example.com/dir/page.html")
	r, _ := urlnorm.Resolve(base, "../img/logo.png")
	fmt.Println(r)

	_, err := urlnorm.Normalize("mailto:someone@example.com")
	fmt.Println(err)
	// Output:
	// http://example.com/a/~user/%C3%A9?q=1
	// http://example.com/img/logo.png
	// urlnorm: unsupported scheme "mailto" in "mailto:someone@example.com"
}
