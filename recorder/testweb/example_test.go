package testweb_test

import (
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/crawltrace/crawltrace/recorder/testweb"
)

func Example() {
	c := testweb.DefaultConfig()
	c.Hosts, c.PagesPerHost = 3, 10
	w, err := testweb.New(c)
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Hosts())
	fmt.Println(w.Seeds()[0])

	// Serve a page through the handler; the Host header picks the host.
	rec := httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://h0002.test/p/3.html", nil))
	b, _ := io.ReadAll(rec.Body)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), len(b) > 0)

	// The ground truth a crawler's extractor must find in those bytes.
	links := w.Links("http://h0002.test/p/3.html")
	fmt.Println(len(links) > 0, links[0])

	code, _ := w.Status("http://h0002.test/p/99.html")
	fmt.Println(code)
	// Output:
	// [h0001.test h0002.test h0003.test trap1.test trap2.test]
	// http://h0001.test/
	// 200 text/html; charset=utf-8 true
	// true http://h0002.test/css/0.css
	// 404
}
