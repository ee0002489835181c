package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/replay/scenario"
)

func TestScenarioCLI(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	if code, _, errs := runCLI(t, "import", "urls", filepath.Join("..", "..", "examples", "urls.txt"), "--nodes", "4", "-o", raw); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	out := filepath.Join(dir, "out")
	code, stdout, errs := runCLI(t, "scenario", "all", raw, "-o", out, "--no-plots")
	if code != 0 {
		t.Fatalf("scenario all: %d %s", code, errs)
	}
	if !strings.Contains(stdout, "scenario-summary.json") {
		t.Errorf("stdout %q", stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "scenario-summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		URLs      int64 `json:"urls"`
		Partition []struct {
			Partitioner    string `json:"partitioner"`
			Nodes          int    `json:"nodes"`
			DestMismatches int64  `json:"dest_mismatches"`
		} `json:"partition"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range s.Partition {
		if p.Partitioner == "host" && p.Nodes == 4 {
			found = true
			if p.DestMismatches != 0 {
				t.Errorf("host/4 reproduces the import's dest with %d mismatches", p.DestMismatches)
			}
		}
	}
	if s.URLs == 0 || !found {
		t.Errorf("summary %s", b)
	}
	// One question into the directory of "all" would leave a summary that
	// disagrees with its table: refused, unless --force replaces all's outputs.
	partition := []string{"scenario", "partition", raw, "-o", out, "--nodes", "2,4", "--partitioners", "host,consistent", "--no-plots"}
	code, _, errs = runCLI(t, partition...)
	if code != 2 || !strings.Contains(errs, out) || !strings.Contains(errs, "--force") {
		t.Errorf("partition into all's directory: %d %q", code, errs)
	}
	code, stdout, errs = runCLI(t, append(partition, "--force")...)
	if code != 0 || !strings.Contains(stdout, "consistent") {
		t.Errorf("partition --force: %d %q %q", code, stdout, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "scenario-summary.json")); err == nil {
		t.Errorf("--force kept the earlier run's scenario-summary.json")
	}
	// Questions sit side by side in one directory.
	if code, _, errs := runCLI(t, "scenario", "locality", raw, "-o", out, "--no-plots", "--sizes", "1,4"); code != 0 {
		t.Errorf("locality beside partition: %d %q", code, errs)
	}
	out = filepath.Join(dir, "bad")
	for _, args := range [][]string{
		{"scenario", "locality", raw, "-o", out, "--sizes", "0"},
		{"scenario", "threads", raw, "-o", out, "--sizes", "lots"},
		{"scenario", "node-loss", raw, "-o", out, "--node", "9"},
		{"scenario", "partition", raw, "-o", out, "--partitioners", "nope"},
		{"scenario", "all", filepath.Join(dir, "missing"), "-o", out},
	} {
		code, _, errs := runCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errs)
		}
	}
}

// A question's printed columns are its fixed-width format: each column
// %Ns (%-Ns for a negative width), one space apart, checked against the
// format written out by hand, NaN and a negative count included; with
// totals only the rows of node -1.
func TestScenarioPrintedColumns(t *testing.T) {
	type row struct {
		node int64
		name string
		n    int64
		f    float64
	}
	rows := []row{{-1, "host", 4, 0.125}, {-1, "consistent", -1, math.NaN()}, {0, "skipped", 0, 0}}
	tb := &scenario.Table{Name: "t", Columns: []scenario.Column{{Name: "node"}, {Name: "name"}, {Name: "n"}, {Name: "f"}}}
	for _, r := range rows {
		tb.Rows = append(tb.Rows, []any{r.node, r.name, r.n, r.f})
	}
	var want strings.Builder
	fmt.Fprintf(&want, "%-11s %5s %9s %9s\n", "partitioner", "N", "cross", "balance")
	for _, r := range rows[:2] {
		fmt.Fprintf(&want, "%-11s %5d %9s %9.3f\n", r.name, r.n, scenarioPct(r.f), r.f)
	}
	var got strings.Builder
	printScenarioTable(&got, tb, true, []scenarioCol{
		{"partitioner", -11, "name", scenarioPlain},
		{"N", 5, "n", scenarioPlain},
		{"cross", 9, "f", scenarioPctCell},
		{"balance", 9, "f", scenarioFixed3},
	})
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}

// Every question prints its table: the columns it names are its table's.
func TestScenarioQuestionsPrint(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	if code, _, errs := runCLI(t, "import", "urls", filepath.Join("..", "..", "examples", "urls.txt"), "--nodes", "4", "-o", raw); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	for q, head := range map[string]string{
		"partition":      "partitioner     N     cross   balance hosts bal\n",
		"splitter-cache": "policy        size        cross         sent    batches\n",
		"threads":        "        k        W  global miss  thread miss\n",
		"node-loss":      "partitioner  hosts moved  not of node    refetched    balance\n",
		"locality":       "     size  hit rate  same host\n",
	} {
		code, stdout, errs := runCLI(t, "scenario", q, raw, "-o", filepath.Join(dir, q), "--no-plots")
		if code != 0 || !strings.HasPrefix(stdout, head) || strings.Count(stdout, "\n") < 3 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", q, code, stdout, errs)
		}
	}
}
