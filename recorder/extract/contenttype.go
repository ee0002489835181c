package extract

import (
	"net/http"
	"strings"
)

// IsHTML reports whether a response with Content-Type ct is an HTML page
// whose links should be extracted. An empty ct is sniffed from the first
// bytes of the body (http.DetectContentType, which reads at most 512).
// The recorder and the WARC importer decide with it, so a page recorded
// live and the same page imported from a WARC are treated alike.
func IsHTML(ct string, body []byte) bool {
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	ct = strings.ToLower(strings.TrimSpace(ct))
	return strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml+xml")
}
