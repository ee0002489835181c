package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// genConfig describes a synthetic raw trace.
type genConfig struct {
	URLs     int     // rows
	Distinct float64 // fraction of rows that introduce a new URL
	Locality float64 // fraction of repeats drawn from the last Window rows
	Window   int
	Nodes    int
	Seed     uint64
	// BatchRows is the rows per record batch (0: the writer's default).
	BatchRows int
	// Hosts is the number of hosts the URLs are spread over (0: 5000),
	// and Pad the most bytes of query string a URL gets on top of its
	// path (0: none; each URL gets a length of its own in 0..Pad, so
	// that URL lengths vary).
	Hosts, Pad int
}

// gen writes dir/crawl (a raw trace of cfg.Nodes nodes) and dir/urls.txt
// (the same URLs as text, one a line) and returns the number of distinct
// URLs. New URLs appear at a steady rate; a repeat is, with probability
// Locality, a URL of one of the last Window rows (a crawl's host locality)
// and otherwise any earlier URL, uniformly.
func gen(dir string, cfg genConfig) (int, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 42))
	distinct := int(float64(cfg.URLs) * cfg.Distinct)
	tf, err := os.Create(filepath.Join(dir, "urls.txt"))
	if err != nil {
		return 0, err
	}
	defer tf.Close()
	tw := bufio.NewWriterSize(tf, 1<<20)
	var ws []*tracefile.URLWriter
	for i := 0; i < cfg.Nodes; i++ {
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(filepath.Join(dir, "crawl"), i),
			tracefile.Meta{CrawlID: "bench", Node: i, Nodes: cfg.Nodes}, tracefile.WriterConfig{FlushRows: cfg.BatchRows})
		if err != nil {
			return 0, err
		}
		ws = append(ws, w)
	}
	window := make([]int, max(cfg.Window, 1))
	next := 0 // new URLs are introduced in order, so exactly `distinct` appear
	hosts := cfg.Hosts
	if hosts <= 0 {
		hosts = 5000
	}
	buf := make([]byte, 0, 128+cfg.Pad)
	for i := 0; i < cfg.URLs; i++ {
		var k int
		switch {
		case next == 0 || next < distinct && rng.IntN(cfg.URLs-i) < distinct-next:
			k = next
			next++
		case rng.Float64() < cfg.Locality && i > 0:
			k = window[rng.IntN(min(i, len(window)))]
		default:
			k = rng.IntN(next)
		}
		window[i%len(window)] = k
		host := k % hosts
		buf = append(buf[:0], "http://www.host"...)
		buf = strconv.AppendInt(buf, int64(host), 10)
		buf = append(buf, ".example.com/section/"...)
		buf = strconv.AppendInt(buf, int64(k%97), 10)
		buf = append(buf, "/page-"...)
		buf = strconv.AppendInt(buf, int64(k), 10)
		buf = append(buf, ".html"...)
		if cfg.Pad > 0 {
			buf = appendPad(buf, uint64(k), cfg.Pad)
		}
		u := string(buf)
		tw.WriteString(u)
		tw.WriteByte('\n')
		if _, err := ws[i%cfg.Nodes].Append(tracefile.URLRecord{URL: u, Kind: tracefile.URLLink, Dest: uint16(host % cfg.Nodes)}); err != nil {
			return 0, err
		}
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			return 0, err
		}
	}
	if err := tw.Flush(); err != nil {
		return 0, err
	}
	return next, nil
}

// appendPad appends URL k's query string: "?q=" and 0..pad letters and
// digits, a function of k alone.
func appendPad(buf []byte, k uint64, pad int) []byte {
	x := k*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	n := int(x>>33) % (pad + 1)
	if n == 0 {
		return buf
	}
	buf = append(buf, "?q="...)
	for i := 0; i < n; i++ {
		x ^= x >> 29
		x *= 0xBF58476D1CE4E5B9
		x ^= x >> 32
		buf = append(buf, "abcdefghijklmnopqrstuvwxyz0123456789"[x%36])
	}
	return buf
}

func genMain(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	var cfg genConfig
	out := fs.String("o", "", "output directory (gets crawl/ and urls.txt)")
	fs.IntVar(&cfg.URLs, "urls", 10_000_000, "rows")
	fs.Float64Var(&cfg.Distinct, "distinct", 0.06, "fraction of rows that are new URLs")
	fs.Float64Var(&cfg.Locality, "locality", 0.9, "fraction of repeats drawn from the last -window rows")
	fs.IntVar(&cfg.Window, "window", 100_000, "rows of locality")
	fs.IntVar(&cfg.Nodes, "nodes", 4, "crawler nodes")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.IntVar(&cfg.Hosts, "hosts", 5000, "hosts the URLs are spread over")
	fs.IntVar(&cfg.Pad, "pad", 0, "most bytes of query string added to a URL (each URL's own length in 0..pad)")
	fs.IntVar(&cfg.BatchRows, "batch-rows", 0, "rows per record batch (0: the writer's default, 65536)")
	fs.Parse(args)
	if *out == "" {
		return fmt.Errorf("gen: -o DIR is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	n, err := gen(*out, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d URLs, %d distinct\n", *out, cfg.URLs, n)
	return nil
}
