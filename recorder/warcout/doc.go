// Package warcout writes a crawl node's fetches as WARC (ISO 28500,
// WARC/1.1), the web archive's own format, and keeps the files part of
// the crawl's state: a checkpoint records them ([State]) and a resume cuts
// them back to it ([Writer.Restore]). It serializes the records itself
// (marshal.go says why); github.com/nlnwa/gowarc/v3 reads them back.
//
// # Files
//
// A node writes one series of files in OutDir/node-NNN/warc/:
//
//	CRAWLID-nodeNNN-00000.warc.gz
//	CRAWLID-nodeNNN-00001.warc.gz   the next, once the last passed MaxFileBytes
//	...
//
// Each record is its own gzip member, so a reader may start at any
// record's offset: compressed at level 1 (on the demo's web level 6 took a
// fifth of the crawl's CPU time), or stored for a block under 512 bytes
// (a request's) and for a body with a content coding (compressed
// already). A file is rotated between exchanges once its size on
// disk reaches [Options.MaxFileBytes]: a file holds whole exchanges and may
// exceed the size by one.
//
// # Records
//
// Each file begins with a warcinfo record (application/warc-fields) naming
// the software, the crawl id, the node, the file, the robots.txt agent and
// the User-Agent sent. Then, per fetch that got a response, in the order
// the node logged the pages (robots.txt fetches and redirect hops
// included, each its own fetch):
//
//	response  WARC-Target-URI (the URL fetched), WARC-Date (when the fetch
//	          started), WARC-IP-Address, Content-Type
//	          "application/http;msgtype=response", WARC-Block-Digest and
//	          WARC-Payload-Digest (sha1, base32), WARC-Warcinfo-ID,
//	          WARC-Truncated when the body is not whole,
//	          Crawltrace-Page-Id (the page log row's id, in decimal), and
//	          WARC-Concurrent-To naming the request record
//	request   the same target, date and warcinfo, Content-Type
//	          "application/http;msgtype=request", WARC-Block-Digest,
//	          WARC-Payload-Digest (of the empty payload), and
//	          WARC-Concurrent-To naming the response
//
// The response block is the status line and header fields as net/http
// gives them (fields sorted by name; a chunked response's
// Transfer-Encoding field left out, as its body is stored with the
// transfer coding removed), a blank line, then the body as received,
// content coding kept. Bodies are kept as far as the fetch read them: cut
// at the crawl's MaxBodyBytes ("WARC-Truncated: length"), left unread when
// the page was not HTML and too long to drain ("length"), or cut by a
// failed connection ("disconnect"). A redirect's response is the 3xx with
// its Location; its target is a fetch of its own, in its own records,
// when the crawl follows it, as Heritrix and wget record redirects.
// robots.txt fetches are ordinary response/request pairs for
// /robots.txt.
//
// # Crash safety
//
// Records are written by one goroutine per node in the order pages were
// logged ([Writer.Add] is called by the host splitter as it logs each
// page), and go to the file (not synced) once the exchanges queued when
// it took them are written. A checkpoint ([Writer.Checkpoint]) waits until every page logged
// so far is written, syncs the open file and records each file's name and
// size. A resume ([Writer.Restore]) cuts the open file back to its
// recorded size and moves files made after the checkpoint aside (both
// kept under state/discarded/), so no record cut by a kill -9 remains,
// and no record of a page whose row the resume cut from the page log:
// those pages are fetched again and written once.
package warcout
