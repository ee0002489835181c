package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// segmentCrawl runs a crawl of 40 pages whose URL log rotates every
// 4 KiB, stopped by its budget: its final checkpoint lists every segment
// as closed, with its size and xxhash64.
func segmentCrawl(t *testing.T, srv *testweb.Server) Config {
	t.Helper()
	cfg := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
	cfg.MaxPages = 40
	cfg.Writer.SegmentBytes = 4 << 10
	runCrawl(t, cfg)
	return cfg
}

// A resume checks the closed segments its checkpoint lists before it
// writes anything: one with a byte changed (its xxhash64), truncated or
// missing (its size) is refused with one line naming it, and the crawl
// directory is left as it was; --resume-skip-hash (ResumeSkipHash)
// checks sizes only. The hashes the checkpoint records are those of the
// files' bytes; an untouched crawl resumes.
func TestResumeChecksSegments(t *testing.T) {
	srv := crawltest.Serve(t, testweb.DefaultConfig())
	first := filepath.Join(tracefile.NodeDir("", 0), tracefile.SegmentName(tracefile.PrefixURLs, 1))
	for _, tc := range []struct {
		name     string
		skipHash bool
		damage   func(path string)
		want     string // in the error; "" when the resume goes on
	}{
		{name: "untouched"},
		{name: "byte flipped", damage: func(p string) { crawltest.FlipURL(t, p) }, want: "xxhash64 mismatch"},
		{name: "byte flipped, sizes only", skipHash: true, damage: func(p string) { crawltest.FlipURL(t, p) }},
		{name: "truncated, sizes only", skipHash: true, want: "bytes, checkpoint", damage: func(p string) {
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-1)
		}},
		{name: "missing", want: "missing", damage: func(p string) { os.Remove(p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := segmentCrawl(t, srv)
			rec, err := RecordedSegments(cfg.OutDir)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec) < 3 {
				t.Fatalf("the manifest records %d segments, want several URL segments and a page segment", len(rec))
			}
			urls, pages, err := splitter.ReadSegmentsPart(filepath.Join(stateDir(cfg.OutDir, 0), checkpoint.DirName))
			if err != nil {
				t.Fatal(err)
			}
			if len(urls.Done) < 2 || urls.Open.Batches != 0 {
				t.Fatalf("final checkpoint: %d closed URL segments, open %+v; want every segment closed", len(urls.Done), urls.Open)
			}
			for _, s := range append(urls.Done, pages.Done...) {
				b, err := os.ReadFile(filepath.Join(tracefile.NodeDir(cfg.OutDir, 0), s.File))
				if err != nil {
					t.Fatal(err)
				}
				if sum := fmt.Sprintf("%016x", xxhash.Sum64(b)); s.XXH64 != sum || s.Bytes != int64(len(b)) {
					t.Errorf("checkpoint records %s as %d bytes, xxhash64 %q; the file: %d bytes, %s", s.File, s.Bytes, s.XXH64, len(b), sum)
				}
			}
			path := filepath.Join(cfg.OutDir, first)
			if tc.damage != nil {
				tc.damage(path)
			}
			before := dirListing(t, cfg.OutDir)
			cfg.Resume, cfg.MaxPages, cfg.ResumeSkipHash = true, 60, tc.skipHash
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = Run(ctx, cfg)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("resume: %v", err)
				}
				// The new manifest records both runs' segments, each
				// with its hash (the damaged one with the hash written).
				var out bytes.Buffer
				err := tracefile.Verify(&out, cfg.OutDir)
				if n := strings.Count(out.String(), "size and xxhash64 OK"); n <= len(rec) {
					t.Errorf("after the resume %d segments verify by hash, want more than the %d of the first run:\n%s", n, len(rec), out.String())
				}
				if (err != nil) != (tc.damage != nil) || (err != nil && !strings.Contains(err.Error(), path)) {
					t.Errorf("verify after the resume: %v", err)
				}
				return
			}
			if !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("resume: %v; want one line naming %s: %s", err, path, tc.want)
			}
			t.Logf("refused: %v", err)
			if after := dirListing(t, cfg.OutDir); after != before {
				t.Errorf("the refused resume changed the crawl directory:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// RecordedSegments takes a node's segments from the manifest when it
// lists the node, from the node's checkpoint otherwise (a node of a
// --peers crawl still running when another wrote the manifest), and from
// the checkpoints alone without a manifest.
func TestRecordedSegmentsSources(t *testing.T) {
	srv := crawltest.Serve(t, testweb.DefaultConfig())
	cfg := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
	cfg.Nodes, cfg.MaxPages = 2, 40
	runCrawl(t, cfg)
	sources := func() map[int]string {
		t.Helper()
		rec, err := RecordedSegments(cfg.OutDir)
		if err != nil {
			t.Fatal(err)
		}
		src := map[int]string{}
		for _, r := range rec {
			node := -1
			for id := range 2 {
				if filepath.Dir(r.Path) == tracefile.NodeDir(cfg.OutDir, id) {
					node = id
				}
			}
			if src[node] != "" && src[node] != r.Source {
				t.Errorf("node %d: segments from %s and %s", node, src[node], r.Source)
			}
			src[node] = r.Source
			if r.Info.XXH64 == "" {
				t.Errorf("%s: no xxhash64 recorded", r.Path)
			}
		}
		return src
	}
	manifest := filepath.Join(cfg.OutDir, tracefile.ManifestName)
	ckpt := func(id int) string {
		return "checkpoint " + filepath.Join(stateDir(cfg.OutDir, id), checkpoint.DirName)
	}
	if got := sources(); len(got) != 2 || got[0] != manifest || got[1] != manifest {
		t.Errorf("with the manifest: %v", got)
	}
	m, err := tracefile.ReadManifest(cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	m.NodeInfo = m.NodeInfo[:1]
	if err := tracefile.WriteManifest(cfg.OutDir, m); err != nil {
		t.Fatal(err)
	}
	if got := sources(); len(got) != 2 || got[0] != manifest || got[1] != ckpt(1) {
		t.Errorf("with a manifest listing node 0: %v", got)
	}
	os.Remove(manifest)
	if got := sources(); len(got) != 2 || got[0] != ckpt(0) || got[1] != ckpt(1) {
		t.Errorf("without a manifest: %v", got)
	}
}
