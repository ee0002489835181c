// Package crawltest holds what the tests of many packages need alike, as
// net/http/httptest does for HTTP: a test web served on loopback for the
// length of a test, every row of a crawl's URL log, and child processes
// started one way.
//
// Child processes. A test that needs a real process (to kill it, signal
// it, run a cluster of them, or measure its own memory) re-executes its
// own test binary, which runs a function named in the environment instead
// of the tests: the package's TestMain calls [Main] with the functions
// its tests may start, and a test starts one with [Command]. No package
// builds the crawltrace binary for its tests: the re-executed test binary
// holds the same code, compiled once with the tests (with their -race or
// -cover flags), needs no Go toolchain at run time and costs no link on a
// loaded machine. (cmd/crawltrace's README test still runs `go run`: what
// it checks is the README's command itself.)
//
// The package never imports the recorder root package, so the root's own
// tests can use it.
package crawltest

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/launch"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// Serve serves the test web wc on 127.0.0.1 (any free port) until the
// test ends, and fails the test if it cannot.
func Serve(t testing.TB, wc testweb.Config) *testweb.Server {
	t.Helper()
	w, err := testweb.New(wc)
	if err != nil {
		t.Fatal(err)
	}
	return ServeWeb(t, w)
}

// ServeWeb serves an existing web like [Serve].
func ServeWeb(t testing.TB, w *testweb.Web) *testweb.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := testweb.ServeWeb(ctx, "127.0.0.1:0", w)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); cancel() })
	return srv
}

// SeedsFile writes seeds, one a line, to a file in a temporary directory
// of the test and returns its path (for --seeds).
func SeedsFile(t testing.TB, seeds []string) string {
	t.Helper()
	return WriteFile(t, t.TempDir(), "seeds.txt", strings.Join(seeds, "\n")+"\n")
}

// WriteFile writes body to the file name in dir and returns its path; it
// fails the test if it cannot.
func WriteFile(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Get returns the body of a GET of url, whatever its status; it fails the
// test if the request or the read fails.
func Get(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// URLRows returns every row of every node's URL log in the crawl
// directory dir, node after node, each node's in log order. It fails the
// test if a log cannot be read, and reports a segment that is not clean
// (cut by a kill, or damaged) as a test error: it is for crawls that
// ended. A cut trace is read with package tracefile itself.
func URLRows(t testing.TB, dir string) []tracefile.URLRecord {
	t.Helper()
	return everyNode(t, dir, NodeURLRows)
}

// everyNode returns the rows read returns for each node of the crawl in
// dir, node after node.
func everyNode[R any](t testing.TB, dir string, read func(t testing.TB, dir string, node int) []R) []R {
	t.Helper()
	nodes, err := tracefile.CrawlNodes(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []R
	for _, n := range nodes {
		out = append(out, read(t, dir, n)...)
	}
	return out
}

// NodeURLRows returns every row of one node's URL log, like [URLRows].
func NodeURLRows(t testing.TB, dir string, node int) []tracefile.URLRecord {
	t.Helper()
	r, err := tracefile.OpenNodeURLs(dir, node)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []tracefile.URLRecord
	for r.Next() {
		b := r.Batch()
		for i := range b.Len() {
			out = append(out, b.Row(i))
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Segments() {
		if !s.Clean {
			t.Errorf("node %d segment %s not clean: %s", node, s.File, s.Error)
		}
	}
	return out
}

// PageRows returns every row of every node's page log in the crawl
// directory dir, node after node, like [URLRows].
func PageRows(t testing.TB, dir string) []tracefile.PageRecord {
	t.Helper()
	return everyNode(t, dir, NodePageRows)
}

// NodePageRows returns every row of one node's page log, segment after
// segment, like [NodeURLRows].
func NodePageRows(t testing.TB, dir string, node int) []tracefile.PageRecord {
	t.Helper()
	var out []tracefile.PageRecord
	EachPageRow(t, dir, node, func(r tracefile.PageRecord) { out = append(out, r) })
	return out
}

// EachPageRow calls fn with every row of one node's page log, robots.txt
// fetches included, in order, skipping a segment a kill left without a
// schema; it fails the test if the log cannot be read.
func EachPageRow(t testing.TB, dir string, node int, fn func(tracefile.PageRecord)) {
	t.Helper()
	paths, err := tracefile.ListSegments(tracefile.NodeDir(dir, node), tracefile.PrefixPages)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		s, err := tracefile.OpenSegment(p, tracefile.KindPages)
		if err != nil {
			if tracefile.IsCutSchema(err) {
				continue // a killed node's segment before its schema was written
			}
			t.Fatal(err)
		}
		for s.Next() {
			rec := s.Record()
			for i := range int(rec.NumRows()) {
				fn(tracefile.PageRow(rec, i))
			}
		}
		s.Close()
	}
}

// childEnv names, in a child's environment, the function it runs.
const childEnv = "CRAWLTEST_CHILD"

// Main is a package's TestMain: in a process that [Command] started, it
// runs the child it names ([RunChild]); otherwise it runs the tests.
func Main(m *testing.M, children map[string]func(args []string) int) {
	RunChild(children)
	os.Exit(m.Run())
}

// Parallel sets how many of a package's parallel tests run at once to n,
// unless the command line gave -test.parallel. It is for packages whose
// parallel tests spend their time waiting on servers, timers and child
// processes rather than on the CPU: the default, GOMAXPROCS, would leave
// the cores idle while they wait. A TestMain calls it after [RunChild],
// before m.Run.
func Parallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// Waiting marks a test whose time is spent waiting on servers, timers
// or child processes rather than on the CPU: -short skips it, saying
// what it runs, and it runs in parallel with the package's other such
// tests (see [Parallel]). A test calls it first.
func Waiting(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
	t.Parallel()
}

// RunChild, in a process that [Command] started, runs the child it names
// with the process's arguments and exits with the status the child
// returns; a name the map does not hold exits 2 with a line saying so.
// In any other process it returns at once. A TestMain that does more
// than [Main] calls it first, before it parses flags.
func RunChild(children map[string]func(args []string) int) {
	name := os.Getenv(childEnv)
	if name == "" {
		return
	}
	child, ok := children[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "crawltest: no child %q in this test binary\n", name)
		os.Exit(2)
	}
	os.Exit(child(os.Args[1:]))
}

// Command returns the command that runs this test binary as the child
// name (a key of the map given to [Main]) with args, in this process's
// environment less what a launcher gives a crawl node (recorder/launch:
// CRAWLTRACE_NODE_ID, CRAWLTRACE_TOKEN, SLURM_*, KUBERNETES_SERVICE_HOST),
// so that a test run in a Slurm job, or by someone who keeps a token in
// the environment, starts the nodes its flags name. The caller may add
// to cmd.Env, sets its output and starts it; the child inherits nothing
// else of the test.
func Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == launch.EnvNodeID || k == launch.EnvToken || k == launch.EnvKubernetes || strings.HasPrefix(k, "SLURM_")
	})
	cmd.Env = append(env, childEnv+"="+name)
	return cmd
}
