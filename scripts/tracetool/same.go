package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// sameCondense checks that two condense output directories hold the same
// report (but for timings, paths and how the work was split) and the same
// condensed traces (fingerprint for fingerprint).
func sameCondense(a, b string) error {
	ra, err := loadReport(filepath.Join(a, "report.json"))
	if err != nil {
		return err
	}
	rb, err := loadReport(filepath.Join(b, "report.json"))
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(ra, rb) {
		ja, _ := json.MarshalIndent(ra, "", " ")
		jb, _ := json.MarshalIndent(rb, "", " ")
		return fmt.Errorf("reports differ:\n%s\n%s", ja, jb)
	}
	traces, _ := filepath.Glob(filepath.Join(a, "node-*.arrow"))
	if len(traces) == 0 {
		return fmt.Errorf("%s: no condensed traces", a)
	}
	for _, ta := range traces {
		fa, _, err := tracefile.ReadCondensedAll(ta)
		if err != nil {
			return err
		}
		fb, _, err := tracefile.ReadCondensedAll(filepath.Join(b, filepath.Base(ta)))
		if err != nil {
			return err
		}
		if !slices.Equal(fa, fb) {
			return fmt.Errorf("%s: fingerprints differ from %s", ta, b)
		}
	}
	fmt.Printf("same: %s and %s (report and %d traces)\n", a, b, len(traces))
	return nil
}

// loadReport reads a report.json without the fields that legitimately differ
// between an unsharded and a sharded run.
func loadReport(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range []string{"elapsed_seconds", "partitions", "shard", "shards", "shards_merged", "input", "input_bytes", "input_bytes_read", "memory_budget", "bytes_out", "map_seconds", "verify_seconds", "spilled_records", "unfiltered_rows"} {
		delete(m, k)
	}
	nodes, _ := m["per_node"].([]any)
	for _, n := range nodes {
		if nm, ok := n.(map[string]any); ok {
			for _, k := range []string{"full", "cross", "bytes_out"} {
				nm[k] = filepath.Base(fmt.Sprint(nm[k]))
			}
			delete(nm, "bytes_out")
		}
	}
	return m, nil
}

// sameReplay checks that two results.csv files hold the same rows but for
// the seconds column.
func sameReplay(a, b string) error {
	ra, err := loadCSV(a)
	if err != nil {
		return err
	}
	rb, err := loadCSV(b)
	if err != nil {
		return err
	}
	if len(ra) < 2 || !reflect.DeepEqual(ra, rb) {
		return fmt.Errorf("%s and %s differ (%d and %d rows)", a, b, len(ra), len(rb))
	}
	fmt.Printf("same: %s and %s (%d rows)\n", a, b, len(ra)-1)
	return nil
}

func loadCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	skip := slices.Index(rows[0], "seconds")
	for i, r := range rows {
		if skip >= 0 && skip < len(r) {
			rows[i] = slices.Delete(slices.Clone(r), skip, skip+1)
		}
	}
	return rows, nil
}
