package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/duckdbtest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/replay"
)

// parquetRun is a small demo run (crawl, condensed, replay, scenario) and
// its Parquet export, one directory per kind, under RUN/parquet.
func parquetRun(t *testing.T) (run, pq string) {
	t.Helper()
	run = filepath.Join(t.TempDir(), "run")
	mustRun(t, "demo", "--out", run, "--hosts", "20", "--pages-per-host", "30", "--max-pages", "400", "--workers", "4",
		"--sizes", "1,16,256", "--no-plots")
	pq = filepath.Join(run, "parquet")
	for _, k := range []string{"crawl", "condensed", "replay", "scenario"} {
		mustRun(t, "export", filepath.Join(run, k), "--format", "parquet", "--row-group-rows", "4096", "-o", filepath.Join(pq, k))
	}
	return run, pq
}

// eq fails the test when DuckDB's answer differs from crawltrace's.
func eq(t *testing.T, what string, duck string, want any) {
	t.Helper()
	if duck != fmt.Sprint(want) {
		t.Errorf("%s: DuckDB reads %s, crawltrace reports %v", what, duck, want)
	}
}

// perNode pairs DuckDB's rows of a per-node query (one row a node, in
// node order, with a "node" column) with the report's per-node entries:
// the number of nodes and each row's node must be the report's, and check
// compares the rest of each pair.
func perNode(t *testing.T, what string, rows []duckdbtest.Row, rep *condense.Report, check func(duckdbtest.Row, condense.NodeReport)) {
	t.Helper()
	if len(rows) != len(rep.PerNode) {
		t.Errorf("%s: DuckDB sees %d nodes, the report %d", what, len(rows), len(rep.PerNode))
	}
	for i, row := range rows[:min(len(rows), len(rep.PerNode))] {
		nr := rep.PerNode[i]
		eq(t, what+": node", row.Str("node"), nr.Node)
		check(row, nr)
	}
}

// DuckDB reads every exported kind (raw URL and page logs, condensed
// traces, results tables) with the counts crawltrace's own readers and
// report.json give, and the same rows at sampled positions.
func TestParquetReadByDuckDB(t *testing.T) {
	db := duckdbtest.Open(t)
	run, pq := parquetRun(t)
	rep, err := condense.ReadReport(filepath.Join(run, "condensed", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	man, err := tracefile.ReadManifest(filepath.Join(run, "crawl"))
	if err != nil {
		t.Fatal(err)
	}
	urls := fmt.Sprintf("read_parquet('%s/crawl/*.urls.parquet')", pq)
	pages := fmt.Sprintf("read_parquet('%s/crawl/*.pages.parquet')", pq)
	full := fmt.Sprintf("read_parquet('%s/condensed/*.full.parquet')", pq)
	cross := fmt.Sprintf("read_parquet('%s/condensed/*.cross.parquet')", pq)
	node0 := filepath.Join(pq, "crawl", "node-000.urls.parquet")
	full0 := filepath.Join(pq, "condensed", "node-000.full.parquet")

	// Sampled rows, read by crawltrace's own readers.
	raw := crawltest.NodeURLRows(t, filepath.Join(run, "crawl"), 0)
	fps, _, err := tracefile.ReadCondensedAll(filepath.Join(run, "condensed", "node-000.full.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 100 || len(fps) != len(raw) {
		t.Fatalf("node 0 has %d raw rows and %d fingerprints", len(raw), len(fps))
	}
	sample := []int{0, 1, len(raw) / 3, len(raw) / 2, len(raw) - 1}
	var pos []string
	for _, i := range sample {
		pos = append(pos, fmt.Sprint(i))
	}
	in := strings.Join(pos, ",")

	res := db.Query(t,
		"SELECT count(*) AS n, count(DISTINCT url) AS d, sum((dest <> node)::INT) AS x FROM "+urls,
		"SELECT node, count(*) AS n, sum((dest <> node)::INT) AS x, count(DISTINCT url) AS d FROM "+urls+" GROUP BY node ORDER BY node",
		"SELECT node, count(*) AS n FROM "+pages+" GROUP BY node ORDER BY node",
		"SELECT count(*) AS n, count(DISTINCT fp) AS d FROM "+full,
		"SELECT count(*) AS n FROM "+cross,
		fmt.Sprintf("SELECT seq, url, kind, coalesce(tag, '') AS tag, source, worker, dest, epoch_us(time) AS t FROM read_parquet('%s') WHERE seq IN (%s) ORDER BY seq", node0, in),
		fmt.Sprintf("SELECT file_row_number AS i, fp FROM read_parquet('%s', file_row_number = true) WHERE file_row_number IN (%s) ORDER BY i", full0, in),
		fmt.Sprintf("SELECT value FROM parquet_kv_metadata('%s') WHERE decode(key) = 'crawltrace.subtrace'", full0),
		fmt.Sprintf("SELECT decode(value) AS v FROM parquet_kv_metadata('%s') WHERE decode(key) = 'crawltrace.crawl_id'", node0),
		fmt.Sprintf("SELECT DISTINCT compression FROM parquet_metadata('%s')", node0),
	)
	eq(t, "URL rows", res[0][0].Str("n"), rep.Total.Rows)
	eq(t, "distinct URLs", res[0][0].Str("d"), rep.Total.DistinctURLs)
	eq(t, "cross rows", res[0][0].Str("x"), rep.Total.CrossRows)
	perNode(t, "URL rows", res[1], rep, func(row duckdbtest.Row, nr condense.NodeReport) {
		eq(t, fmt.Sprintf("node %d rows", nr.Node), row.Str("n"), nr.Rows)
		eq(t, fmt.Sprintf("node %d cross rows", nr.Node), row.Str("x"), nr.CrossRows)
		eq(t, fmt.Sprintf("node %d distinct URLs", nr.Node), row.Str("d"), nr.DistinctURLs)
	})
	var pageNodes int
	for _, nm := range man.NodeInfo {
		if nm.PageRows == 0 {
			continue
		}
		if pageNodes < len(res[2]) {
			eq(t, fmt.Sprintf("node %d page rows", nm.Node), res[2][pageNodes].Str("n"), nm.PageRows)
		}
		pageNodes++
	}
	if pageNodes == 0 || len(res[2]) != pageNodes {
		t.Errorf("DuckDB sees page rows on %d nodes, the manifest on %d", len(res[2]), pageNodes)
	}
	eq(t, "condensed rows", res[3][0].Str("n"), rep.Total.Rows)
	eq(t, "distinct fingerprints", res[3][0].Str("d"), rep.Total.DistinctFPs)
	eq(t, "cross trace rows", res[4][0].Str("n"), rep.Total.CrossRows)
	if len(res[5]) != len(sample) || len(res[6]) != len(sample) {
		t.Fatalf("sampled %d URL rows and %d fingerprints, want %d", len(res[5]), len(res[6]), len(sample))
	}
	for k, i := range sample {
		u, d := raw[i], res[5][k]
		got := strings.Join([]string{d.Str("seq"), d.Str("url"), d.Str("kind"), d.Str("tag"), d.Str("source"), d.Str("worker"), d.Str("dest"), d.Str("t")}, " ")
		// DuckDB reads a UTC timestamp as TIMESTAMP WITH TIME ZONE, whose
		// precision is the microsecond.
		want := fmt.Sprint(u.Seq, " ", u.URL, " ", u.Kind, " ", u.Tag, " ", u.Source, " ", u.Worker, " ", u.Dest, " ", u.Time/1000)
		if got != want {
			t.Errorf("URL row %d: DuckDB %q, crawltrace %q", i, got, want)
		}
		eq(t, fmt.Sprintf("fingerprint %d", i), res[6][k].Str("fp"), fps[i])
	}
	eq(t, "subtrace metadata rows", fmt.Sprint(len(res[7])), 1)
	if len(res[8]) != 1 {
		t.Errorf("no crawltrace.crawl_id in %s", node0)
	} else {
		eq(t, "crawl id", res[8][0].Str("v"), rep.CrawlID)
	}
	if len(res[9]) != 1 || !strings.EqualFold(res[9][0].Str("compression"), "zstd") {
		t.Errorf("column chunk compression %v, want ZSTD only", res[9])
	}

	// Results tables: replay results against results.csv, scenario tables
	// against their CSVs.
	f, err := os.Open(filepath.Join(run, "replay", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := replay.ReadCSV(f, "results.csv")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	tables, _ := filepath.Glob(filepath.Join(pq, "scenario", "*.parquet"))
	if len(tables) == 0 {
		t.Fatal("no scenario tables exported")
	}
	queries := []string{
		fmt.Sprintf("SELECT count(*) AS n FROM read_parquet('%s/replay/results.parquet')", pq),
		fmt.Sprintf("SELECT hits, misses, requests FROM read_parquet('%s/replay/results.parquet') WHERE trace = '%s' AND policy = '%s' AND size = %d",
			pq, last.Trace, last.Policy, last.Size),
	}
	for _, tb := range tables {
		queries = append(queries, fmt.Sprintf("SELECT count(*) AS n FROM read_parquet('%s')", tb))
	}
	res = db.Query(t, queries...)
	eq(t, "replay result rows", res[0][0].Str("n"), len(rows))
	if len(res[1]) != 1 {
		t.Fatalf("replay row %s/%s/%d: DuckDB finds %d rows", last.Trace, last.Policy, last.Size, len(res[1]))
	}
	eq(t, "replay row", res[1][0].Str("hits")+" "+res[1][0].Str("misses")+" "+res[1][0].Str("requests"),
		fmt.Sprint(last.Hits, " ", last.Misses, " ", last.Requests))
	for i, tb := range tables {
		name := strings.TrimSuffix(filepath.Base(tb), tracefile.ParquetExt)
		cf, err := os.Open(filepath.Join(run, "scenario", name+".csv"))
		if err != nil {
			t.Errorf("scenario table %s has no CSV: %v", name, err)
			continue
		}
		recs, err := csv.NewReader(cf).ReadAll()
		cf.Close()
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "scenario "+name+" rows", res[2+i][0].Str("n"), len(recs)-1)
	}
}

// docQueries returns the SQL blocks of docs/trace-format.md by the name in
// their first line ("-- name"), with the run directory "run" of the
// document's paths replaced by run.
func docQueries(t *testing.T, run string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "trace-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	parts := strings.Split(string(b), "```sql\n")
	for _, p := range parts[1:] {
		q, _, ok := strings.Cut(p, "```")
		first, body, _ := strings.Cut(q, "\n")
		name, named := strings.CutPrefix(first, "-- ")
		if !ok || !named {
			t.Fatalf("docs/trace-format.md: a sql block does not start with a -- name line:\n%s", q)
		}
		body = strings.TrimSuffix(strings.TrimSpace(body), ";")
		out[name] = strings.ReplaceAll(body, "'run/", "'"+run+"/")
	}
	return out
}

// The DuckDB queries docs/trace-format.md shows, run as written on an
// exported demo run, give what crawltrace's own readers and report.json
// give.
func TestTraceFormatDuckDBQueries(t *testing.T) {
	db := duckdbtest.Open(t)
	run, _ := parquetRun(t)
	qs := docQueries(t, run)
	names := []string{"schema metadata", "links per page", "cross fraction per node", "distinct URLs over time", "top hosts"}
	if len(qs) != len(names) {
		t.Errorf("docs/trace-format.md has %d named queries, the test checks %d (%q)", len(qs), len(names), names)
	}
	var queries []string
	for _, n := range names {
		q, ok := qs[n]
		if !ok {
			t.Fatalf("docs/trace-format.md has no %q query", n)
		}
		queries = append(queries, q)
	}
	// The time buckets as epoch seconds, around the query as written.
	queries[3] = "SELECT epoch(second)::BIGINT AS s, distinct_urls FROM (" + queries[3] + ") ORDER BY s"
	res := db.Query(t, queries...)

	// The references, from crawltrace's readers.
	rep, err := condense.ReadReport(filepath.Join(run, "condensed", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	crawl := filepath.Join(run, "crawl")
	nodes := crawlNodes(t, crawl)
	links := map[uint32]int{}
	firstSeen := map[string]int64{}
	hostURLs, hostSet := map[string]int{}, map[string]map[string]bool{}
	for _, n := range nodes {
		eachPage(t, crawl, n, func(pg tracefile.PageRecord) {
			if pg.Status == 200 && strings.HasPrefix(pg.ContentType, "text/html") {
				links[pg.Links]++
			}
		})
		r, err := tracefile.OpenNodeURLs(crawl, n)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			b := r.Batch()
			for i := range b.Len() {
				u := b.Row(i)
				if ft, ok := firstSeen[u.URL]; !ok || u.Time < ft {
					firstSeen[u.URL] = u.Time
				}
				pu, err := url.Parse(u.URL)
				if err != nil {
					t.Fatal(err)
				}
				h := pu.Hostname()
				hostURLs[h]++
				if hostSet[h] == nil {
					hostSet[h] = map[string]bool{}
				}
				hostSet[h][u.URL] = true
			}
		}
		r.Close()
	}

	// schema metadata
	md := map[string]string{}
	for _, row := range res[0] {
		md[row.Str("key")] = row.Str("value")
	}
	if md["crawltrace.subtrace"] != "full" || md["crawltrace.node"] != "0" || md["crawltrace.crawl_id"] != rep.CrawlID ||
		md["crawltrace.tool_version"] != tracefile.ToolVersion || md["crawltrace.kind"] != "condensed" {
		t.Errorf("schema metadata query: %v", md)
	}

	// links per page
	var want []string
	for l := range uint32(1 << 16) {
		if c, ok := links[l]; ok {
			want = append(want, fmt.Sprint(l, ":", c))
		}
	}
	var got []string
	for _, row := range res[1] {
		got = append(got, row.Str("links")+":"+row.Str("pages"))
	}
	if len(want) < 3 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("links per page: DuckDB %v, crawltrace's page log %v", got, want)
	}

	// cross fraction per node
	perNode(t, "cross fraction", res[2], rep, func(row duckdbtest.Row, nr condense.NodeReport) {
		eq(t, fmt.Sprintf("node %d urls", nr.Node), row.Str("urls"), nr.Rows)
		frac, _ := row["cross_fraction"].(float64)
		if w := float64(nr.CrossRows) / float64(nr.Rows); math.Abs(frac-w) > 1e-12 {
			t.Errorf("node %d cross fraction: DuckDB %v, report %v", nr.Node, row["cross_fraction"], w)
		}
	})

	// distinct URLs over time
	perSec := map[int64]int{}
	for _, ts := range firstSeen {
		perSec[ts/1e9]++
	}
	secs := make([]int64, 0, len(perSec))
	for s := range perSec {
		secs = append(secs, s)
	}
	slices.Sort(secs)
	want, got = nil, nil
	cum := 0
	for _, s := range secs {
		cum += perSec[s]
		want = append(want, fmt.Sprint(s, ":", cum))
	}
	for _, row := range res[3] {
		got = append(got, row.Str("s")+":"+row.Str("distinct_urls"))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || cum != int(rep.Total.DistinctURLs) {
		t.Errorf("distinct URLs over time: DuckDB %v, crawltrace %v (report: %d distinct)", got, want, rep.Total.DistinctURLs)
	}

	// top hosts
	hosts := make([]string, 0, len(hostURLs))
	for h := range hostURLs {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b string) int {
		if c := hostURLs[b] - hostURLs[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	want, got = nil, nil
	for _, h := range hosts[:min(20, len(hosts))] {
		want = append(want, fmt.Sprint(h, ":", hostURLs[h], ":", len(hostSet[h])))
	}
	for _, row := range res[4] {
		got = append(got, row.Str("host")+":"+row.Str("urls")+":"+row.Str("distinct_urls"))
	}
	if len(want) < 10 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("top hosts: DuckDB %v, crawltrace %v", got, want)
	}
}

// export --format parquet from the command line: what it prints, the
// output policy, and one-line errors with exit status 2 on bad input.
func TestExportParquetCLI(t *testing.T) {
	dir := t.TempDir()
	crawl, cond := filepath.Join(dir, "crawl"), filepath.Join(dir, "condensed")
	mustRun(t, "import", "urls", filepath.Join("..", "..", "examples", "urls.txt"), "--nodes", "2", "-o", crawl)
	mustRun(t, "condense", crawl, "-o", cond)
	out := mustRun(t, "export", crawl, "--format", "parquet", "-o", filepath.Join(dir, "pq"))
	want := fmt.Sprintf("wrote %s (urls, 300 rows)\nwrote %s (urls, 0 rows)\n",
		filepath.Join(dir, "pq", "node-000.urls.parquet"), filepath.Join(dir, "pq", "node-001.urls.parquet"))
	if out != want {
		t.Errorf("export printed:\n%s\nwant:\n%s", out, want)
	}
	one := filepath.Join(dir, "one.parquet")
	mustRun(t, "export", filepath.Join(cond, "node-000.full.arrow"), "--format", "parquet", "-o", one)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", crawl, "--format", "parquet", "-o", filepath.Join(dir, "pq")}, "earlier run"},
		{[]string{"export", filepath.Join(cond, "node-000.full.arrow"), "--format", "parquet", "-o", one}, "exists"},
		{[]string{"export", filepath.Join(cond, "report.json"), "--format", "parquet", "-o", filepath.Join(dir, "r.parquet")}, "report.json"},
		{[]string{"export", filepath.Join(dir, "missing"), "--format", "parquet", "-o", filepath.Join(dir, "m.parquet")}, "missing"},
		{[]string{"export", crawl, "--format", "parquet", "--in-format", "text", "-o", filepath.Join(dir, "x")}, "--in-format"},
		{[]string{"export", crawl, "--format", "parquet", "--row-group-rows", "0", "-o", filepath.Join(dir, "y")}, "--row-group-rows"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line naming %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
	mustRun(t, "export", crawl, "--format", "parquet", "-o", filepath.Join(dir, "pq"), "--force")
}
