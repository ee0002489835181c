package extract_test

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/crawltrace/crawltrace/recorder/extract"
)

func Example() {
	page := `<html><head><link rel=icon href="/favicon.ico"></head><body>
<a href="news/today.html#top">News</a> <A HREF="NEWS/today.html">again</A>
<img src="../img/logo.png" srcset="../img/logo@2x.png 2x, ../img/logo@3x.png 3x">
<a href="mailto:editor@example.com">mail</a>
<meta http-equiv="refresh" content="30; url=/index.html">
</body></html>`
	base, _ := url.Parse("http://Example.com/site/index.html")
	e := extract.NewExtractor() // one per worker, reused across pages
	st, err := e.Extract(strings.NewReader(page), base, func(l extract.Link) {
		fmt.Println(l.Tag, l.URL)
	})
	fmt.Printf("%+v %v\n", st, err)
	// Output:
	// link http://example.com/favicon.ico
	// a http://example.com/site/news/today.html
	// a http://example.com/site/NEWS/today.html
	// img http://example.com/img/logo.png
	// img http://example.com/img/logo@2x.png
	// img http://example.com/img/logo@3x.png
	// meta-refresh http://example.com/index.html
	// {Links:7 Unique:7 Skipped:1} <nil>
}
