package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// measure is one run of a command: wall time, CPU time (user + system, of
// the process and the children it waited for) and peak resident memory.
type measure struct {
	wall, cpu float64
	maxRSS    int64 // bytes
	out       string
}

func timeCmd(dir string, name string, args ...string) (measure, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr // progress lines; shown only when the command fails
	start := time.Now()
	out, err := cmd.Output()
	m := measure{wall: time.Since(start).Seconds(), out: strings.TrimSpace(string(out))}
	if err != nil {
		return m, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		m.maxRSS = int64(ru.Maxrss) << 10
	}
	return m, nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

type stats struct{ min, med float64 }

func summarize(v []float64) stats {
	s := slices.Clone(v)
	slices.Sort(s)
	return stats{s[0], s[len(s)/2]}
}

// benchMain times condense against `LC_ALL=C sort -u | wc -l` on each
// generated trace directory, interleaved (condense, sort, condense, ...),
// and then a 4-way sharded condense for its read volume.
func benchMain(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	bin := fs.String("bin", "crawltrace", "crawltrace binary")
	memory := fs.String("memory", "64MiB", "condense --memory")
	reps := fs.Int("reps", 3, "runs of each command")
	shards := fs.Int("shards", 4, "map and reduce tasks of the read-volume run (0: skip)")
	fs.Parse(args)
	fmt.Printf("machine: %d CPUs, load average before: %s\n\n", runtime.NumCPU(), loadavg())
	fmt.Println("| trace | URLs | distinct | condense wall, min / median | CPU s | CPU/wall | `sort -u \\| wc -l` wall, min / median | CPU s | CPU/wall | speed-up (median wall) | speed-up (CPU s) | peak RSS per distinct URL |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	var volume []string
	for _, dir := range fs.Args() {
		raw, text := filepath.Join(dir, "crawl"), filepath.Join(dir, "urls.txt")
		var cw, cc, sw, sc, ccpu, scpu []float64
		var rss int64
		var distinct, rows int64
		for i := 0; i < *reps; i++ {
			out := filepath.Join(dir, "out")
			os.RemoveAll(out)
			m, err := timeCmd(dir, *bin, "condense", raw, "-o", out, "--memory", *memory)
			if err != nil {
				return err
			}
			cw, cc, ccpu = append(cw, m.wall), append(cc, m.cpu/m.wall), append(ccpu, m.cpu)
			rss = max(rss, m.maxRSS)
			rep, err := readTotals(filepath.Join(out, "report.json"))
			if err != nil {
				return err
			}
			distinct, rows = rep.Total.DistinctURLs, rep.Total.Rows
			s, err := timeCmd(dir, "sh", "-c", "LC_ALL=C sort -u "+text+" | wc -l")
			if err != nil {
				return err
			}
			sw, sc, scpu = append(sw, s.wall), append(sc, s.cpu/s.wall), append(scpu, s.cpu)
			if n, _ := strconv.ParseInt(s.out, 10, 64); n != distinct {
				return fmt.Errorf("%s: sort -u counts %d distinct URLs, condense %d", dir, n, distinct)
			}
		}
		c, s := summarize(cw), summarize(sw)
		ccs, scs := summarize(ccpu).med, summarize(scpu).med
		fmt.Printf("| %s | %d | %d (%.0f%%) | %.2f / %.2f s | %.2f | %.2f | %.2f / %.2f s | %.2f | %.2f | %.1fx | %.1fx | %.1f bytes |\n",
			filepath.Base(dir), rows, distinct, 100*float64(distinct)/float64(rows), c.min, c.med, ccs, summarize(cc).med,
			s.min, s.med, scs, summarize(sc).med, s.med/c.med, scs/ccs, float64(rss)/float64(distinct))
		if *shards > 0 {
			v, err := readVolume(dir, *bin, *memory, *shards, distinct)
			if err != nil {
				return err
			}
			volume = append(volume, v)
		}
	}
	fmt.Printf("\nload average after: %s\n", loadavg())
	if len(volume) > 0 {
		fmt.Printf("\nSharded read volume (%d map tasks one after another, then %d reduce tasks and merge):\n\n", *shards, *shards)
		fmt.Println("| trace | input bytes | bytes read by all map tasks | read volume | merged distinct URLs |")
		fmt.Println("|---|---|---|---|---|")
		for _, v := range volume {
			fmt.Println(v)
		}
	}
	return nil
}

type totals struct {
	Total struct {
		Rows         int64 `json:"rows"`
		DistinctURLs int64 `json:"distinct_urls"`
	} `json:"total"`
	BytesIn        int64 `json:"bytes_in"`
	InputBytesRead int64 `json:"input_bytes_read"`
}

func readTotals(path string) (*totals, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t totals
	return &t, json.Unmarshal(b, &t)
}

// readVolume runs a sharded condense (map tasks, reduce tasks, merge) and
// reports the bytes the map tasks read over the input size.
func readVolume(dir, bin, memory string, n int, distinct int64) (string, error) {
	out := filepath.Join(dir, "sharded")
	os.RemoveAll(out)
	defer os.RemoveAll(out)
	var read int64
	for i := 0; i < n; i++ {
		if _, err := timeCmd(dir, bin, "condense", filepath.Join(dir, "crawl"), "-o", out, "--shard", fmt.Sprintf("%d/%d", i, n), "--memory", memory); err != nil {
			return "", err
		}
		t, err := readTotals(filepath.Join(out, fmt.Sprintf("map-%d-of-%d.json", i, n)))
		if err != nil {
			return "", err
		}
		read += t.InputBytesRead
	}
	for i := 0; i < n; i++ {
		if _, err := timeCmd(dir, bin, "condense", "reduce", out, "--shard", fmt.Sprintf("%d/%d", i, n), "--memory", memory); err != nil {
			return "", err
		}
	}
	if _, err := timeCmd(dir, bin, "condense", "merge", out, "-o", out); err != nil {
		return "", err
	}
	t, err := readTotals(filepath.Join(out, "report.json"))
	if err != nil {
		return "", err
	}
	if t.Total.DistinctURLs != distinct {
		return "", fmt.Errorf("%s: sharded run counts %d distinct URLs, unsharded %d", dir, t.Total.DistinctURLs, distinct)
	}
	return fmt.Sprintf("| %s | %d | %d | %.3f | %d |", filepath.Base(dir), t.BytesIn, read, float64(read)/float64(t.BytesIn), t.Total.DistinctURLs), nil
}
