package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A page imported from a WARC is decoded as the recorder decodes it: by
// its Content-Type charset or <meta>, the path as UTF-8 and the query in
// the page's encoding (see TestPageCharsets in recorder for the crawl).
func TestWARCCharsets(t *testing.T) {
	sjis := "\x93\xfa\x96\x7b" // 日本
	recs := []wrec{
		{typ: "response", uri: "http://www.example.test/latin1", ctype: httpRec,
			block: "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=ISO-8859-1\r\nTransfer-Encoding: chunked\r\n\r\n" +
				chunked("<a href=\"caf\xe9.html?q=\xe9t\xe9\">")},
		{typ: "response", uri: "http://www.example.test/sjis", ctype: httpRec,
			block: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n" +
				gzipString("<meta charset=shift_jis><a href=\"/"+sjis+".html?q="+sjis+"\">")},
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "f.warc.gz")
	os.WriteFile(in, warcFile(recs, true), 0o644)
	if _, err := WARC([]string{in}, Options{Out: filepath.Join(dir, "crawl")}); err != nil {
		t.Fatal(err)
	}
	want := []urlRow{
		{"http://www.example.test/caf%C3%A9.html?q=%E9t%E9", "link", "a"},
		{"http://www.example.test/%E6%97%A5%E6%9C%AC.html?q=%93%FA%96{", "link", "a"},
	}
	if got := rowsOf(readTrace(t, filepath.Join(dir, "crawl"))[0]); !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n%v\nwant\n%v", got, want)
	}
}
