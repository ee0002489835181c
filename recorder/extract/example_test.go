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
	st, err := e.Extract(strings.NewReader(page), base, "text/html; charset=utf-8", func(l extract.Link) {
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
	// {Links:7 Unique:7 Skipped:1 Encoding:utf-8 UnknownCharset:false Transcoded:false} <nil>
}

// A page in a legacy encoding: the path is UTF-8, the query is encoded in
// the page's encoding, as a browser does.
func ExampleExtractor_Extract_encoding() {
	page := "<meta charset=iso-8859-1><a href=\"caf\xe9.html?q=\xe9t\xe9\">caf\xe9</a>"
	base, _ := url.Parse("http://example.com/")
	e := extract.NewExtractor()
	st, _ := e.Extract(strings.NewReader(page), base, "text/html", func(l extract.Link) {
		fmt.Println(l.Tag, l.URL)
	})
	fmt.Println(st.Encoding)
	// Output:
	// a http://example.com/caf%C3%A9.html?q=%E9t%E9
	// windows-1252
}
