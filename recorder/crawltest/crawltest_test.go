package crawltest_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// The children this test binary can run: "exit" prints its arguments and
// exits with the status its first argument names.
func TestMain(m *testing.M) {
	crawltest.Main(m, map[string]func([]string) int{
		"exit": func(args []string) int {
			fmt.Println(strings.Join(args, " "))
			code, _ := strconv.Atoi(args[0])
			return code
		},
	})
}

// A child runs the function its name selects, with the arguments given,
// and its status is the function's; a name not in the map exits 2.
func TestCommand(t *testing.T) {
	out, err := crawltest.Command("exit", "3", "a b", "c").Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(out) != "3 a b c\n" {
		t.Errorf("child exit: %v, output %q; want status 3 and %q", err, out, "3 a b c\n")
	}
	if out, err := crawltest.Command("exit", "0").Output(); err != nil || string(out) != "0\n" {
		t.Errorf("child exit 0: %v, %q", err, out)
	}
	cmd := crawltest.Command("nosuch")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), `no child "nosuch"`) {
		t.Errorf("unknown child: %v, stderr %q", err, stderr.String())
	}
}

// Serve serves the web on loopback until the test ends; SeedsFile holds
// its seeds one a line.
func TestServe(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 2, 3, 0
	srv := crawltest.Serve(t, wc)
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
		t.Fatalf("address %s, want loopback", srv.Addr())
	}
	resp, err := http.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) == 0 {
		t.Errorf("GET %s: %d, %d bytes", srv.URL(), resp.StatusCode, len(body))
	}
	b, err := os.ReadFile(crawltest.SeedsFile(t, srv.Web().Seeds()))
	if err != nil || string(b) != strings.Join(srv.Web().Seeds(), "\n")+"\n" {
		t.Errorf("seeds file %q, %v; want %q", b, err, srv.Web().Seeds())
	}
}

// URLRows and PageRows read node after node, each in log order, every
// row written.
func TestRows(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for node, urls := range [][]string{{"http://a.test/", "http://a.test/x"}, {"http://b.test/"}} {
		m := tracefile.Meta{CrawlID: "t", Nodes: 2, Node: node}
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(dir, node), m, tracefile.WriterConfig{})
		if err != nil {
			t.Fatal(err)
		}
		pw, err := tracefile.CreatePageWriter(tracefile.NodeDir(dir, node), m, tracefile.WriterConfig{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range urls {
			w.Append(tracefile.URLRecord{URL: u, Kind: tracefile.URLLink})
			pw.Append(tracefile.PageRecord{URL: u, Status: 200})
			want = append(want, u)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var got, gotPages []string
	for _, r := range crawltest.URLRows(t, dir) {
		got = append(got, r.URL)
	}
	for _, r := range crawltest.PageRows(t, dir) {
		gotPages = append(gotPages, r.URL)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || strings.Join(gotPages, " ") != strings.Join(want, " ") {
		t.Errorf("rows %q, pages %q, want %q", got, gotPages, want)
	}
	if rows := crawltest.NodeURLRows(t, dir, 1); len(rows) != 1 || rows[0].URL != "http://b.test/" {
		t.Errorf("node 1 rows %+v", rows)
	}
	if rows := crawltest.NodePageRows(t, dir, 1); len(rows) != 1 || rows[0].URL != "http://b.test/" {
		t.Errorf("node 1 pages %+v", rows)
	}
}

// NoCertTLS fails every handshake with the no-certificate alert and tells
// the server name; HangUp's connections end before a handshake completes.
func TestNoCertTLSAndHangUp(t *testing.T) {
	var names []string
	addr := crawltest.NoCertTLS(t, func(name string) { names = append(names, name) })
	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "dead.test"})
	if err == nil {
		conn.Close()
		t.Fatal("handshake with NoCertTLS succeeded")
	}
	if !strings.Contains(err.Error(), "remote error: tls: internal error") {
		t.Errorf("NoCertTLS: %v, want the internal error alert", err)
	}
	if !slices.Equal(names, []string{"dead.test"}) {
		t.Errorf("hello saw %q, want [dead.test]", names)
	}
	conn, err = tls.Dial("tcp", crawltest.HangUp(t), &tls.Config{ServerName: "x.test"})
	if err == nil {
		conn.Close()
		t.Fatal("handshake with HangUp succeeded")
	}
}

// Waiting skips the test under -short and otherwise makes it parallel:
// t.Run of a parallel subtest returns before the subtest's body goes on,
// which it does only once its parent's body has returned.
func TestWaiting(t *testing.T) {
	var ranOn, skipped atomic.Bool
	t.Run("parent", func(t *testing.T) {
		t.Run("waiting", func(t *testing.T) {
			t.Cleanup(func() { skipped.Store(t.Skipped()) })
			crawltest.Waiting(t, "waits on nothing")
			ranOn.Store(true)
		})
		if ranOn.Load() {
			t.Error("the Waiting test ran to its end inside t.Run: it is not parallel")
		}
	})
	if testing.Short() != skipped.Load() {
		t.Errorf("-short %v, skipped %v: want it skipped under -short only", testing.Short(), skipped.Load())
	}
	if !testing.Short() && !ranOn.Load() {
		t.Error("the Waiting test never ran")
	}
}

// Listeners are open at once on distinct loopback ports, each serving
// at the address returned for it.
func TestListeners(t *testing.T) {
	lns, addrs := crawltest.Listeners(t, 3)
	if len(lns) != 3 || len(addrs) != 3 {
		t.Fatalf("%d listeners, %d addresses, want 3", len(lns), len(addrs))
	}
	seen := map[string]bool{}
	for i, ln := range lns {
		if !strings.HasPrefix(addrs[i], "127.0.0.1:") || seen[addrs[i]] {
			t.Fatalf("addresses %v: want distinct loopback ones", addrs)
		}
		seen[addrs[i]] = true
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, i) })}
		go srv.Serve(ln)
		defer srv.Close()
	}
	for i, a := range addrs {
		if got := crawltest.Get(t, "http://"+a+"/"); got != strconv.Itoa(i) {
			t.Errorf("%s served by listener %s, want %d", a, got, i)
		}
	}
}
