// Package warciotest reads WARC files with webrecorder's warcio.js, a
// reader built apart from crawltrace and the Go WARC library it uses, for
// tests that check what other tools read from crawl --warc.
//
// warcio is npm's package, run by node. It is never a dependency of the Go
// module: .ci/warcio installs it under [Dir] ($CRAWLTRACE_WARCIO, or the
// user cache directory's crawltrace/warcio). When node or the package is
// missing a test skips, except in CI (CI=true), where it fails, as the
// DuckDB tests do (internal/duckdbtest).
package warciotest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"github.com/crawltrace/crawltrace/internal/sampledata"
)

// EnvDir names the environment variable that overrides [Dir].
const EnvDir = "CRAWLTRACE_WARCIO"

// Dir is the npm prefix that holds node_modules/warcio: $CRAWLTRACE_WARCIO,
// or crawltrace/warcio in the user cache directory.
func Dir() string { return sampledata.CacheDir(EnvDir, "warcio") }

// Record is one record as warcio read it.
type Record struct {
	Type string `json:"type"`
	URI  string `json:"uri"`
	ID   string `json:"id"`
	// PayloadDigest is the record's WARC-Payload-Digest field; Computed is
	// "sha1:" and the base32 of the sha1 of the payload warcio read (the
	// block after the HTTP head), for records with an HTTP block.
	PayloadDigest string `json:"payloadDigest"`
	Computed      string `json:"computed"`
	PageID        string `json:"pageId"`
}

// File is what warcio read of one file: its records and the error that
// stopped it ("" when none).
type File struct {
	Path    string   `json:"path"`
	Records []Record `json:"records"`
	Error   string   `json:"error"`
}

// script reads every file named on its command line with warcio's
// WARCParser and prints a JSON array of Files.
const script = `
const path = require('path');
const crypto = require('crypto');
const fs = require('fs');
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
function base32(buf) {
  let bits = 0, value = 0, out = '';
  for (const b of buf) {
    value = (value << 8) | b; bits += 8;
    while (bits >= 5) { out += alphabet[(value >>> (bits - 5)) & 31]; bits -= 5; }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}
(async () => {
  const { WARCParser } = await import(path.join(process.env.WARCIO_DIR, 'node_modules', "warcio", 'dist', 'index.js'));
  const out = [];
  for (const file of process.argv.slice(1)) {
    const f = { path: file, records: [], error: '' };
    try {
      const parser = new WARCParser(fs.createReadStream(file));
      for await (const record of parser) {
        const h = record.warcHeaders;
        const r = { type: record.warcType || '', uri: record.warcTargetURI || '', id: h.headers.get('WARC-Record-ID') || '',
          payloadDigest: h.headers.get('WARC-Payload-Digest') || '', computed: '', pageId: h.headers.get('Crawltrace-Page-Id') || '' };
        const payload = await record.readFully(false);
        if (record.httpHeaders) {
          r.computed = 'sha1:' + base32(crypto.createHash('sha1').update(payload).digest());
        }
        f.records.push(r);
      }
    } catch (e) {
      f.error = String(e && e.stack || e);
    }
    out.push(f);
  }
  process.stdout.write(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(1); });
`

// Read reads files with warcio. When node or warcio is missing the test
// is skipped, or failed in CI.
func Read(t testing.TB, files ...string) []File {
	t.Helper()
	node, dir := sampledata.NodePackage(t, "warcio", EnvDir, "warcio", "warcio")
	cmd := exec.Command(node, append([]string{"-e", script, "--"}, files...)...)
	cmd.Env = append(os.Environ(), "WARCIO_DIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("warcio: %v\n%s", err, stderr.String())
	}
	var out []File
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("warcio: %v", err)
	}
	return out
}
