package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// dirListing is every file under dir but lock files with its size and
// modification time, one line each.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() != outdir.LockName { // rewritten by each holder
			st, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %d %s\n", path, st.Size(), st.ModTime())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkpointSum recomputes checkpoint.json's checksum the way the format
// describes it: xxhash64 of the file with the checksum's digits zeroed.
func checkpointSum(t *testing.T, path string) (recorded, computed string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"checksum": "([0-9a-f]{16})"\n}\n$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no checksum at its end:\n%s", path, b)
	}
	zeroed := bytes.Replace(b, m[1], []byte("0000000000000000"), 1)
	return string(m[1]), fmt.Sprintf("%016x", xxhash.Sum64(zeroed))
}

// A damaged checkpoint is refused on resume with an error naming the
// damaged file, before anything in the crawl directory moves: a deleted,
// truncated, zeroed or flipped checkpoint.json of one node of three, one
// node's checkpoint directory gone, a zeroed DUE part, one byte flipped
// in the frontier part. (Each was read as "no checkpoint", or loaded,
// and the crawl restarted or went on silently.)
func TestResumeRefusesDamagedCheckpoint(t *testing.T) {
	srv := crawltest.Serve(t, testweb.DefaultConfig())
	ckptFile := func(dir string, node int, name string) string {
		return filepath.Join(stateDir(dir, node), checkpoint.DirName, name)
	}
	flip := func(path string) {
		b, _ := os.ReadFile(path)
		b[len(b)/2] ^= 0x08
		os.WriteFile(path, b, 0o644)
	}
	for _, tc := range []struct {
		name   string
		node   int
		file   string
		damage func(path string)
	}{
		{"checkpoint.json deleted", 1, checkpoint.MetaName, func(p string) { os.Remove(p) }},
		{"checkpoint.json truncated", 1, checkpoint.MetaName, func(p string) {
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()/2)
		}},
		{"checkpoint.json zeroed", 1, checkpoint.MetaName, func(p string) {
			st, _ := os.Stat(p)
			os.WriteFile(p, make([]byte, st.Size()), 0o644)
		}},
		{"checkpoint.json byte flipped", 2, checkpoint.MetaName, flip},
		{"checkpoint.json still valid JSON", 2, checkpoint.MetaName, func(p string) {
			// A digit of the time changed: only the checksum tells.
			b, _ := os.ReadFile(p)
			i := bytes.Index(b, []byte(`"time": "2`)) + len(`"time": "2`)
			b[i] = '0' + (b[i]-'0'+1)%10
			os.WriteFile(p, b, 0o644)
		}},
		{"checkpoint directory removed", 1, "", func(p string) { os.RemoveAll(p) }},
		{"checkpoint of another crawl", 1, "", func(p string) {
			// Node 1's checkpoint replaced by that of another crawl.
			other := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
			other.Nodes, other.MaxPages, other.CrawlID = 3, 60, "other"
			runCrawl(t, other)
			os.RemoveAll(p)
			os.Rename(filepath.Join(stateDir(other.OutDir, 1), checkpoint.DirName), p)
		}},
		{"due zeroed", 0, "due", func(p string) {
			st, _ := os.Stat(p)
			os.WriteFile(p, make([]byte, st.Size()), 0o644)
		}},
		{"frontier byte flipped", 0, "frontier", flip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
			cfg.Nodes, cfg.MaxPages = 3, 60
			runCrawl(t, cfg)
			meta := ckptFile(cfg.OutDir, tc.node, checkpoint.MetaName)
			if rec, got := checkpointSum(t, meta); rec != got {
				t.Fatalf("%s records checksum %s, its bytes give %s", meta, rec, got)
			}
			path := ckptFile(cfg.OutDir, tc.node, tc.file)
			tc.damage(path)
			before := dirListing(t, cfg.OutDir)

			cfg.Resume, cfg.MaxPages = true, 120
			var log bytes.Buffer
			cfg.Log = &log
			_, err := Run(context.Background(), cfg)
			if !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Clean(path)) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("resume: %v; want a one-line corrupt-file error naming %s", err, path)
			}
			t.Logf("refused: %v", err)
			if after := dirListing(t, cfg.OutDir); after != before {
				t.Errorf("the refused resume changed the crawl directory:\nbefore\n%s\nafter\n%s", before, after)
			}
			if log.Len() > 0 {
				t.Errorf("the refused resume logged %q", log.String())
			}
		})
	}
}

// A resume that finds segments but no checkpoint (the crawl was killed
// before its first) says so, with the rows it moves aside, and starts
// again from the seeds; so does one killed while its first checkpoint was
// committed node by node (some nodes hold it only in checkpoint.tmp/).
func TestResumeWithoutCheckpointSaysSo(t *testing.T) {
	srv := crawltest.Serve(t, testweb.DefaultConfig())
	for _, tc := range []string{"none", "first commit cut"} {
		t.Run(tc, func(t *testing.T) {
			cfg := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
			cfg.Nodes, cfg.MaxPages = 2, 40
			runCrawl(t, cfg)
			os.Remove(filepath.Join(cfg.OutDir, tracefile.ManifestName))
			for id := 0; id < 2; id++ {
				ck := filepath.Join(stateDir(cfg.OutDir, id), checkpoint.DirName)
				switch {
				case tc == "none":
					os.RemoveAll(ck)
				case id == 1:
					os.Rename(ck, filepath.Join(stateDir(cfg.OutDir, id), checkpoint.TmpName))
				}
			}
			urls := int64(len(readURLs(t, cfg.OutDir)))
			var pages int64
			for id := 0; id < 2; id++ {
				pages += int64(len(readPages(t, cfg.OutDir, id)))
			}
			cfg.Resume = true
			var log bytes.Buffer
			cfg.Log = &log
			res := runCrawl(t, cfg)
			line := strings.TrimSpace(log.String())
			want := fmt.Sprintf("its %d URL rows and %d page rows were moved", urls, pages)
			if !strings.Contains(line, "no checkpoint") || !strings.Contains(line, want) || !strings.Contains(line, "starts again from its seeds") || strings.Contains(line, "\n") {
				t.Errorf("log %q: want one line saying there is no checkpoint and %q", line, want)
			}
			if res.Stats.DiscardedURLs != urls || res.Stats.DiscardedPages != pages || res.Stats.FetchAttempts == 0 {
				t.Errorf("stats: %d URL rows and %d pages discarded, %d fetches; want %d, %d and a new crawl", res.Stats.DiscardedURLs, res.Stats.DiscardedPages, res.Stats.FetchAttempts, urls, pages)
			}
		})
	}
}

// A finished crawl resumes at once: it reports that it is finished and
// writes nothing (it used to wait forever, checkpointing every second,
// and added empty segments), unless a larger page budget gives it more
// to do.
func TestResumeFinishedCrawl(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 4, 20, 0 // a finite web
	srv := crawltest.Serve(t, wc)
	for _, tc := range []struct {
		name        string
		first, then int64 // --max-pages of the crawl and of its resume
		more        bool
	}{
		{"frontier empty", 0, 0, false},
		{"frontier empty, larger budget", 0, 1000, false},
		{"budget used", 20, 20, false},
		{"budget raised", 20, 35, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
			cfg.Nodes, cfg.MaxPages = 2, tc.first
			first := runCrawl(t, cfg)
			if want := map[bool]string{true: StopMaxPages, false: StopDone}[tc.first > 0]; first.Stats.StopReason != want {
				t.Fatalf("first run stopped by %s, want %s", first.Stats.StopReason, want)
			}
			before := dirListing(t, cfg.OutDir)
			cfg.Resume, cfg.MaxPages = true, tc.then
			res := runCrawl(t, cfg)
			if !tc.more {
				if res.Finished == "" || res.Stats != nil {
					t.Fatalf("resume of a finished crawl: %+v; want Finished set and nothing else", res)
				}
				if after := dirListing(t, cfg.OutDir); after != before {
					t.Errorf("the resume of a finished crawl wrote:\nbefore\n%s\nafter\n%s", before, after)
				}
				return
			}
			if res.Finished != "" || res.Stats.FetchAttempts != tc.then || res.Stats.Resumes != 1 {
				t.Errorf("resume with --max-pages %d: finished %q, %d fetch attempts, %d resumes; want %d attempts in all", tc.then, res.Finished, res.Stats.FetchAttempts, res.Stats.Resumes, tc.then)
			}
		})
	}
}
