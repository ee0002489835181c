// Package duckdbtest runs SQL with DuckDB for tests that check what other
// tools read from crawltrace's exports.
//
// DuckDB is npm's @duckdb/node-api, a registry package that ships DuckDB's
// binary, run by node. It is never a dependency of the Go module: .ci/duckdb
// installs it under [Dir] ($CRAWLTRACE_DUCKDB, or the user cache directory's
// crawltrace/duckdb). When node or the package is missing a test skips,
// except in CI (CI=true), where it fails, as with the real samples of
// package sampledata.
package duckdbtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/sampledata"
)

// EnvDir names the environment variable that overrides [Dir].
const EnvDir = "CRAWLTRACE_DUCKDB"

// Dir is the npm prefix that holds node_modules/@duckdb/node-api:
// $CRAWLTRACE_DUCKDB, or crawltrace/duckdb in the user cache directory.
func Dir() string { return sampledata.CacheDir(EnvDir, "duckdb") }

// DB runs queries in fresh in-memory DuckDB instances.
type DB struct {
	node, dir string
}

// Open finds node and the DuckDB package. When either is missing the test
// is skipped, or failed in CI.
func Open(t testing.TB) *DB {
	t.Helper()
	node, dir := sampledata.NodePackage(t, "DuckDB", EnvDir, "duckdb", "@duckdb/node-api")
	return &DB{node: node, dir: dir}
}

// script runs each SQL text of a JSON array read from stdin and prints a
// JSON array of their results, each an array of rows (objects by column
// name; BIGINT and UBIGINT values as decimal strings).
const script = `
const path = require('path');
const { DuckDBInstance } = require(path.join(process.env.DUCKDB_DIR, 'node_modules', '@duckdb', 'node-api'));
(async () => {
  const queries = JSON.parse(require('fs').readFileSync(0, 'utf8'));
  const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
  const con = await inst.connect();
  const out = [];
  for (const q of queries) {
    try {
      out.push((await con.runAndReadAll(q)).getRowObjectsJson());
    } catch (e) {
      console.error('duckdb: ' + e.message + '\nin: ' + q);
      process.exit(1);
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
`

// Row is one result row, by column name.
type Row map[string]any

// Str is column c of the row as text (numbers as DuckDB prints them).
func (r Row) Str(c string) string {
	v, ok := r[c]
	if !ok {
		return fmt.Sprintf("<no column %q in %v>", c, map[string]any(r))
	}
	if v == nil {
		return "NULL"
	}
	if f, ok := v.(float64); ok {
		return fmt.Sprint(f)
	}
	return fmt.Sprint(v)
}

// Query runs queries in order in one DuckDB instance and returns their
// rows; a failing query fails the test.
func (db *DB) Query(t testing.TB, queries ...string) [][]Row {
	t.Helper()
	in, _ := json.Marshal(queries)
	cmd := exec.Command(db.node, "-e", script)
	cmd.Env = append(os.Environ(), "DUCKDB_DIR="+db.dir)
	cmd.Stdin = strings.NewReader(string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, stderr.String())
	}
	var res [][]Row
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("duckdb: bad output %q: %v", out, err)
	}
	return res
}
