package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/launch"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// clusterWeb serves a small deterministic web (no traps, no crawl delays)
// in the test process and writes its seeds file.
type clusterWeb struct {
	addr  string
	seeds string
	web   *testweb.Web
}

func startClusterWeb(t testing.TB, hosts, pages int) *clusterWeb {
	t.Helper()
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = hosts, pages, 0
	wc.CrawlDelayFraction = 0
	srv := crawltest.Serve(t, wc)
	return &clusterWeb{addr: srv.Addr(), seeds: crawltest.SeedsFile(t, srv.Web().Seeds()), web: srv.Web()}
}

// proc is one crawltrace process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process exited; err is then set
	err  error
	log  string
}

func startProc(t testing.TB, logPath string, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, logPath, nil, args...)
}

// startProcEnv starts a process as startProc does, with env (KEY=VALUE)
// added to its environment.
func startProcEnv(t testing.TB, logPath string, env []string, args ...string) *proc {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := crawltest.Command(cliChild, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// exited reports whether the process has exited.
func exited(p *proc) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to exit on its own within d.
func (p *proc) wait(t testing.TB, name string, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		b, _ := os.ReadFile(p.log)
		t.Fatalf("%s did not stop within %s; its log:\n%s", name, d, tail(string(b), 3000))
		return nil
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// freePorts returns n loopback addresses free a moment ago, for child
// processes to listen on. They are drawn from below the kernel's
// ephemeral range (ports 20000 up to it), never handed out twice in this
// test process, and each checked by listening on it: a port the kernel
// had picked (127.0.0.1:0) and the test closed could meanwhile become the
// local end of another test's outgoing connection, one of the 16 tests
// running at once, and the child then failed with "address already in
// use".
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	lo, hi := 20000, ephemeralLow()
	var addrs []string
	for tries := 0; len(addrs) < n; tries++ {
		if tries > 10000 {
			t.Fatalf("no free loopback port in [%d, %d)", lo, hi)
		}
		port := lo + rand.IntN(hi-lo)
		if portsGiven[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		ln.Close()
		portsGiven[port] = true
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// ip_local_port_range; 32768, its default, where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if lo, err := strconv.Atoi(f[0]); err == nil && lo > 20000+1000 {
			return lo
		}
	}
	return 32768
}

// cluster is an N-process TCP crawl of a clusterWeb into dir.
type cluster struct {
	dir   string
	peers []string
	web   *clusterWeb
	extra []string
	procs []*proc
}

const clusterToken = "test-token"

func (c *cluster) args(i int, more ...string) []string {
	a := []string{"crawl", "-o", c.dir, "--node-id", strconv.Itoa(i), "--peers", strings.Join(c.peers, ","),
		"--token", clusterToken, "--resolve", "*:" + c.web.addr, "--allow-private", "--seeds", c.web.seeds,
		"--delay-factor", "0", "--workers", "4", "--crawl-id", "cluster-test", "--max-retry-after", retryCap}
	return append(append(a, c.extra...), more...)
}

func newCluster(t testing.TB, web *clusterWeb, n int, extra ...string) *cluster {
	// The crawl directory holds only the crawl; the node logs go beside it.
	c := &cluster{dir: filepath.Join(t.TempDir(), "crawl"), peers: freePorts(t, n), web: web, extra: extra}
	c.procs = make([]*proc, n)
	for i := range n {
		c.procs[i] = c.start(t, i)
	}
	return c
}

func (c *cluster) start(t testing.TB, i int, more ...string) *proc {
	return startProc(t, filepath.Join(filepath.Dir(c.dir), fmt.Sprintf("node-%d.log", i)), c.args(i, more...)...)
}

func (c *cluster) status(i int) (peer.NodeStatus, error) {
	var s peer.NodeStatus
	req, _ := http.NewRequest(http.MethodGet, "http://"+c.peers[i]+peer.PathStatus, nil)
	req.Header.Set("Authorization", "Bearer "+clusterToken)
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("status %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

// killWhenBusy kills node (SIGKILL) once it has sent and received
// batches, and returns the time it had exited.
func (c *cluster) killWhenBusy(t testing.TB, node int) time.Time {
	t.Helper()
	crawltest.WaitFor(t, fmt.Sprintf("node %d to exchange batches", node), 30*time.Second, func() bool {
		s, err := c.status(node)
		return err == nil && s.Sent > 0 && s.Received > 0
	})
	c.procs[node].cmd.Process.Signal(syscall.SIGKILL)
	<-c.procs[node].done
	return time.Now()
}

// queuedFor is the number of batches node holds for dest, sent and not
// yet acknowledged (its status; -1 when it does not answer).
func (c *cluster) queuedFor(node, dest int) int {
	s, err := c.status(node)
	if err != nil || dest >= len(s.Queued) {
		return -1
	}
	return s.Queued[dest]
}

// waitQueuedFor waits up to d until every other node holds in its outbox
// more batches for the node dest, which the caller has killed, than it
// did when called: batches dest never received and must get when it
// comes back. (Batches for a node that is down are never acknowledged,
// so a larger count means a new one.)
func (c *cluster) waitQueuedFor(t testing.TB, dest int, d time.Duration) {
	t.Helper()
	before := map[int]int{}
	for i := range c.procs {
		before[i] = c.queuedFor(i, dest)
	}
	crawltest.WaitFor(t, fmt.Sprintf("node %d's peers to queue batches for it", dest), d, func() bool {
		for i := range c.procs {
			if i == dest {
				continue
			}
			if n := c.queuedFor(i, dest); n < 0 || n <= before[i] {
				return false
			}
		}
		return true
	})
}

// fetchedAll reports every page of want that none of the first nodes
// fetched, and returns the pages they fetched.
func (c *cluster) fetchedAll(t testing.TB, nodes int, want map[string]bool) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for i := range nodes {
		for _, u := range pagesOf(t, c.dir, i) {
			got[u] = true
		}
	}
	for u := range want {
		if !got[u] {
			t.Errorf("never fetched: %s", u)
		}
	}
	return got
}

// pagesOf returns the URLs of node's page log (robots.txt excluded), cut
// segments of killed incarnations included.
func pagesOf(t testing.TB, dir string, node int) []string {
	t.Helper()
	var out []string
	eachPage(t, dir, node, func(r tracefile.PageRecord) { out = append(out, r.URL) })
	return out
}

// eachPage calls fn with every page (robots.txt fetches excluded) of
// node's page log, in order, skipping segments a kill left without a
// schema.
func eachPage(t testing.TB, dir string, node int, fn func(tracefile.PageRecord)) {
	t.Helper()
	crawltest.EachPageRow(t, dir, node, func(r tracefile.PageRecord) {
		if !strings.HasSuffix(r.URL, "/robots.txt") {
			fn(r)
		}
	})
}

// crawlNodes lists the nodes of the crawl in dir (tracefile.CrawlNodes),
// failing the test if they cannot be listed.
func crawlNodes(t testing.TB, dir string) []int {
	t.Helper()
	nodes, err := tracefile.CrawlNodes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// waitNodes waits up to d for each of nodes (every node when none is
// named) to exit with status 0, and fails the test with the log of one
// that does not.
func (c *cluster) waitNodes(t testing.TB, d time.Duration, nodes ...int) {
	t.Helper()
	if len(nodes) == 0 {
		for i := range c.procs {
			nodes = append(nodes, i)
		}
	}
	for _, i := range nodes {
		p := c.procs[i]
		if err := p.wait(t, fmt.Sprintf("node %d", i), d); err != nil {
			b, _ := os.ReadFile(p.log)
			t.Fatalf("node %d: %v\n%s", i, err, tail(string(b), 3000))
		}
	}
}

// controlPages crawls web with one process and returns the pages it fetched.
func controlPages(t testing.TB, web *clusterWeb) map[string]bool {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "crawl")
	p := startProc(t, filepath.Join(filepath.Dir(dir), "log"), "crawl", "-o", dir, "--resolve", "*:"+web.addr, "--allow-private",
		"--seeds", web.seeds, "--min-delay", "0", "--delay-factor", "0", "--workers", "8", "--max-retry-after", retryCap)
	if err := p.wait(t, "control crawl", 60*time.Second); err != nil {
		t.Fatalf("control crawl: %v", err)
	}
	want := map[string]bool{}
	for _, u := range pagesOf(t, dir, 0) {
		want[u] = true
	}
	if len(want) < 100 {
		t.Fatalf("control crawl fetched %d pages", len(want))
	}
	return want
}

func readStats(t testing.TB, dir string, node int) recorder.Stats {
	t.Helper()
	return readStatsFile(t, filepath.Join(tracefile.NodeDir(dir, node), recorder.StatsName))
}

// readStatsFile reads a stats.json.
func readStatsFile(t testing.TB, path string) recorder.Stats {
	t.Helper()
	var s recorder.Stats
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func readEvents(t testing.TB, dir string, node int) []tracefile.Event {
	t.Helper()
	evs, err := tracefile.ReadEvents(filepath.Join(tracefile.NodeDir(dir, node), tracefile.EventsName))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func postRaw(t testing.TB, addr, auth, epoch string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+peer.PathBatch, bytes.NewReader(body))
	req.Header.Set("Content-Type", peer.BatchContentType)
	req.Header.Set("Authorization", auth)
	// A peer's request carries the crawl's topology hash and the node it
	// is meant for; the node answers its hash in its status.
	st, err := (&cluster{peers: []string{addr}}).status(0)
	if err != nil {
		t.Errorf("status of %s: %v", addr, err)
	}
	req.Header.Set(peer.HeaderTopology, st.Topology)
	req.Header.Set(peer.HeaderTo, strconv.Itoa(st.Node))
	if epoch != "" {
		req.Header.Set(peer.HeaderEpoch, epoch)
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Errorf("post: %v", err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestClusterRestart: three crawltrace processes; node 1 is killed with
// SIGKILL mid-crawl and restarted with --resume once both its peers have
// queued batches it never received. All three exit
// 0 on their own and every page a 1-process crawl fetches is fetched.
// Wrong tokens, garbage and a stale epoch sent to a live node are refused
// and the crawl goes on.
//
// With checkpoints every 500 ms the restarted node resumes from its last
// one (frontier, DUE and the batch ids it had processed), and its peers
// resend only the batches that checkpoint does not cover; without, it
// starts again from empty state and its peers resend everything.
func TestClusterRestart(t *testing.T) {
	childProcesses(t, "runs four crawls in child processes")
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"no-checkpoint", nil},
		{"checkpoints", []string{"--checkpoint-every", "500ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clusterRestart(t, tc.extra)
		})
	}
}

func clusterRestart(t *testing.T, extra []string) {
	web := startClusterWeb(t, 12, 30)
	want := controlPages(t, web)
	c := newCluster(t, web, 3, append([]string{"--min-delay", "60ms"}, extra...)...)
	ckpt := filepath.Join(tracefile.NodeDir(c.dir, 1), "state", "checkpoint", "checkpoint.json")
	crawltest.WaitFor(t, "node 1 to exchange batches and log pages", 30*time.Second, func() bool {
		s, err := c.status(1)
		st, serr := os.Stat(filepath.Join(tracefile.NodeDir(c.dir, 1), tracefile.SegmentName(tracefile.PrefixPages, 1)))
		if extra != nil {
			if _, cerr := os.Stat(ckpt); cerr != nil {
				return false
			}
		}
		return err == nil && s.Sent > 0 && s.Received > 0 && serr == nil && st.Size() > 0
	})
	c.procs[1].cmd.Process.Signal(syscall.SIGKILL)
	<-c.procs[1].done
	c.waitQueuedFor(t, 1, 30*time.Second)
	c.procs[1] = c.start(t, 1, "--resume")
	crawltest.WaitFor(t, "node 0 to see node 1's new incarnation", 30*time.Second, func() bool {
		s, err := c.status(0)
		return err == nil && len(s.Peers) == 3 && s.Peers[1] == 2
	})
	// Bad input to a live node: refused, and the node stays up.
	var buf bytes.Buffer
	if err := peer.EncodeBatch(&buf, &peer.Batch{From: 1, Epoch: 1, Seq: 999, URLs: []string{"http://h0001.test/stale"}, Kinds: []string{"link"}, Source: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	old := buf.Bytes()
	for _, tc := range []struct {
		name, auth, epoch string
		body              []byte
		code              int
	}{
		{"wrong token", "Bearer nope", "2", old, http.StatusUnauthorized},
		{"garbage", "Bearer " + clusterToken, "2", []byte("\xff\xff\xff\xffgarbage"), http.StatusBadRequest},
		{"stale epoch", "Bearer " + clusterToken, "1", old, http.StatusConflict},
	} {
		start := time.Now()
		code := postRaw(t, c.peers[0], tc.auth, tc.epoch, tc.body)
		t.Logf("%s: %d after %s", tc.name, code, time.Since(start))
		if code != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.code)
		}
	}
	c.waitNodes(t, 90*time.Second)
	got := map[string]int{}
	for i := range 3 {
		for _, u := range pagesOf(t, c.dir, i) {
			got[u]++
		}
	}
	missing, twice := 0, 0
	for u := range want {
		if got[u] == 0 {
			missing++
			if missing <= 5 {
				t.Errorf("never fetched: %s", u)
			}
		}
	}
	for _, n := range got {
		if n > 1 {
			twice++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d pages never fetched", missing, len(want))
	}
	st := readStats(t, c.dir, 1)
	t.Logf("%d pages, %d fetched more than once (node 1 re-crawled its hosts); node 1 epoch %d resent %d batches, its peers %d+%d",
		len(want), twice, st.Epoch, st.BatchesResent, readStats(t, c.dir, 0).BatchesResent, readStats(t, c.dir, 2).BatchesResent)
	for i := range 3 {
		if s := readStats(t, c.dir, i); s.StopReason != recorder.StopDone || s.OutboxLeft != 0 {
			t.Errorf("node %d: stop %s, outbox left %d", i, s.StopReason, s.OutboxLeft)
		}
		if !readCheckpointMeta(t, c.dir, i).CrawlDone {
			t.Errorf("node %d: the final checkpoint does not record that the crawl is finished", i)
		}
	}
	if st.Epoch != 2 {
		t.Errorf("restarted node 1 has epoch %d, want 2", st.Epoch)
	}
	// The trace of a crawl with a restart condenses like any other.
	if code, out, stderr := runCLI(t, "condense", c.dir, "-o", t.TempDir()); code != 0 {
		t.Errorf("condense: exit %d\n%s%s", code, out, stderr)
	}
}

// startProcs is this test process's GOMAXPROCS as it started, the one a
// child process starts with too.
var startProcs = runtime.GOMAXPROCS(0)

// TestClusterMaxPages: --max-pages is shared by the processes, and a
// clean stop delivers every batch: sent equals received, none left.
func TestClusterMaxPages(t *testing.T) {
	childProcesses(t, "runs a crawl in child processes")
	web := startClusterWeb(t, 12, 30)
	c := newCluster(t, web, 3, "--min-delay", "0", "--max-pages", "100")
	c.waitNodes(t, 60*time.Second)
	var fetched, sent, acked, recv int64
	for i := range 3 {
		s := readStats(t, c.dir, i)
		if s.StopReason != recorder.StopMaxPages || s.OutboxLeft != 0 {
			t.Errorf("node %d: stop %s, outbox left %d", i, s.StopReason, s.OutboxLeft)
		}
		// A crawl stopped by its budget is not finished: a larger
		// --max-pages continues it.
		if readCheckpointMeta(t, c.dir, i).CrawlDone {
			t.Errorf("node %d: the final checkpoint of a max-pages stop records that the crawl is finished", i)
		}
		fetched += s.FetchAttempts
		sent += s.BatchesSent
		acked += s.BatchesAcked
		recv += s.BatchesReceived
	}
	if fetched != 100 {
		t.Errorf("%d pages fetched, want the budget 100", fetched)
	}
	if sent == 0 || sent != recv || acked != sent {
		t.Errorf("batches: %d sent, %d acknowledged, %d received", sent, acked, recv)
	}
	// Three nodes on this machine divide its cores unless something else
	// did (launch.Procs, tested in its package): each says so at its end.
	m := launch.ThisMachine()
	m.GOMAXPROCS = startProcs // a child's default, whatever a test run here set since
	procs, _ := launch.Procs(c.peers, 0, m)
	want := fmt.Sprintf("this one ran with GOMAXPROCS=%d", procs)
	for i := range 3 {
		b, err := os.ReadFile(c.procs[i].log)
		if err != nil {
			t.Fatal(err)
		}
		if said := strings.Contains(string(b), want); said != (procs != m.GOMAXPROCS) {
			t.Errorf("node %d (GOMAXPROCS %d, %d online CPUs; %d wanted): %q said %v:\n%s", i, m.GOMAXPROCS, m.Online, procs, want, said, b)
		}
	}
}

// TestClusterFailover: three processes with the consistent partitioner;
// node 2 is killed and never restarted. Nodes 0 and 1 declare it dead,
// take its hosts by the ring (and only its hosts) and finish the crawl:
// every page is fetched but those node 2 had fetched.
func TestClusterFailover(t *testing.T) {
	childProcesses(t, "runs four crawls in child processes")
	web := startClusterWeb(t, 12, 30)
	want := controlPages(t, web)
	c := newCluster(t, web, 3, "--min-delay", "40ms", "--partitioner", "consistent", "--peer-timeout", "2s")
	crawltest.WaitFor(t, "node 2 to log URLs", 30*time.Second, func() bool {
		st, err := os.Stat(filepath.Join(tracefile.NodeDir(c.dir, 2), tracefile.SegmentName(tracefile.PrefixURLs, 1)))
		return err == nil && st.Size() > 0
	})
	c.killWhenBusy(t, 2)
	for i := range 2 {
		if err := c.procs[i].wait(t, fmt.Sprintf("node %d", i), 60*time.Second); err != nil {
			b, _ := os.ReadFile(c.procs[i].log)
			t.Fatalf("node %d: %v\n%s", i, err, tail(string(b), 3000))
		}
	}
	ring := partition.NewConsistent([]int{0, 1, 2}, 0)
	after := ring.Without(2)
	byHost := map[string]map[int]bool{}
	fetched := map[string]bool{}
	for i := range 3 {
		for _, u := range pagesOf(t, c.dir, i) {
			fetched[u] = true
			h := partition.HostOf(u)
			if byHost[h] == nil {
				byHost[h] = map[int]bool{}
			}
			byHost[h][i] = true
		}
	}
	for u := range want {
		if !fetched[u] {
			t.Errorf("never fetched: %s", u)
		}
	}
	taken := 0
	for h, nodes := range byHost {
		u := "http://" + h + "/"
		own := ring.Node(u)
		if own == 2 && nodes[after.Node(u)] {
			taken++
		}
		for n := range nodes {
			if n != own && !(own == 2 && n == after.Node(u)) {
				t.Errorf("host %s (node %d's) fetched by node %d", h, own, n)
			}
		}
	}
	if taken == 0 {
		t.Error("no host of node 2 was crawled by its new owner")
	}
	hostsIn := 0
	for i := range 2 {
		var re []tracefile.Event
		for _, e := range readEvents(t, c.dir, i) {
			if e.Event == "reassign" {
				re = append(re, e)
			}
		}
		if len(re) != 1 || !slices.Equal(re[0].Left, []int{2}) || !slices.Equal(re[0].Live, []int{0, 1}) || re[0].HostsMovedOther != 0 {
			t.Fatalf("node %d reassign events: %+v", i, re)
		}
		hostsIn += len(re[0].HostsIn)
		for _, h := range re[0].HostsIn {
			u := "http://" + h + "/"
			if ring.Node(u) != 2 || after.Node(u) != i {
				t.Errorf("node %d took host %s, owned by %d before and %d after", i, h, ring.Node(u), after.Node(u))
			}
		}
		if s := readStats(t, c.dir, i); s.StopReason != recorder.StopDone {
			t.Errorf("node %d stopped: %s", i, s.StopReason)
		}
	}
	if hostsIn == 0 {
		t.Error("the reassign events name no host taken over")
	}
	t.Logf("%d hosts of node 2 crawled by their new owners; events name %d", taken, hostsIn)
	// scenario node-loss simulates the same loss and shows the live one.
	code, out, stderr := runCLI(t, "scenario", "node-loss", c.dir, "-o", t.TempDir(), "--node", "2", "--no-plots")
	if code != 0 || !strings.Contains(out, "live reassignments") || !strings.Contains(out, "left [2] joined []") {
		t.Errorf("scenario node-loss: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("scenario node-loss:\n%s", out)
}

// TestClusterRefusesURLPartitioner: a live crawl never splits a host over
// nodes.
func TestClusterRefusesURLPartitioner(t *testing.T) {
	code, _, stderr := runCLI(t, "crawl", "-o", t.TempDir(), "--nodes", "2", "--partitioner", "url", "http://a.test/")
	if code != 2 || !strings.Contains(stderr, `partitioner "url"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestClusterRejoin: with the consistent partitioner node 2 is killed,
// declared dead and its hosts taken over; restarted with --resume, it
// rejoins, its hosts go back to it, and the crawl finishes with every page
// fetched.
func TestClusterRejoin(t *testing.T) {
	longOnly(t)
	childProcesses(t, "runs four crawls in child processes")
	web := startClusterWeb(t, 12, 30)
	want := controlPages(t, web)
	c := newCluster(t, web, 3, "--min-delay", "50ms", "--partitioner", "consistent", "--peer-timeout", "2s")
	c.killWhenBusy(t, 2)
	crawltest.WaitFor(t, "nodes 0 and 1 to declare node 2 dead", 30*time.Second, func() bool {
		for i := range 2 {
			s, err := c.status(i)
			if err != nil || !slices.Equal(s.Dead, []int{2}) {
				return false
			}
		}
		return true
	})
	c.procs[2] = c.start(t, 2, "--resume")
	c.waitNodes(t, 90*time.Second)
	c.fetchedAll(t, 3, want)
	for i := range 2 {
		var left, joined bool
		for _, e := range readEvents(t, c.dir, i) {
			if e.Event != "reassign" {
				continue
			}
			if e.HostsMovedOther != 0 {
				t.Errorf("node %d: a reassignment moved %d hosts of other nodes", i, e.HostsMovedOther)
			}
			left = left || slices.Equal(e.Left, []int{2})
			joined = joined || (slices.Equal(e.Joined, []int{2}) && slices.Equal(e.Live, []int{0, 1, 2}))
		}
		if !left || !joined {
			t.Errorf("node %d: reassign events: left %v, joined %v", i, left, joined)
		}
	}
	if s := readStats(t, c.dir, 2); s.Epoch != 2 || s.StopReason != recorder.StopDone {
		t.Errorf("node 2: epoch %d, stop %s", s.Epoch, s.StopReason)
	}
}

// TestClusterKilledSenderKeepsOutbox: node 0 crawls while node 1 is
// down, takes checkpoints, and is killed with -9. The batches for node 1
// live in its memory and in its checkpoints' outbox part, not in a file
// each: resumed beside node 1, node 0 sends what its last checkpoint
// held, fetches again the pages logged after it (their links make the
// later batches again), and every page of the one-node reference is
// fetched.
func TestClusterKilledSenderKeepsOutbox(t *testing.T) {
	longOnly(t)
	childProcesses(t, "runs three crawls in child processes")
	web := startClusterWeb(t, 12, 30)
	want := controlPages(t, web)
	c := &cluster{dir: t.TempDir(), peers: freePorts(t, 2), web: web, extra: []string{"--min-delay", "20ms", "--checkpoint-every", "300ms"}}
	c.procs = make([]*proc, 2)
	c.procs[0] = c.start(t, 0)
	part := filepath.Join(tracefile.NodeDir(c.dir, 0), "state", "checkpoint", peer.OutboxPartName)
	held := 0
	crawltest.WaitFor(t, "node 0 to checkpoint batches for node 1", 60*time.Second, func() bool {
		p := peer.NewOutboxPart()
		f, err := os.Open(part)
		if err != nil {
			return false
		}
		defer f.Close()
		if p.Load(f) != nil {
			return false // being replaced
		}
		held = p.Len()
		return held >= 3
	})
	c.procs[0].cmd.Process.Signal(syscall.SIGKILL)
	<-c.procs[0].done
	if ents, _ := os.ReadDir(filepath.Join(tracefile.NodeDir(c.dir, 0), "state", "outbox")); slices.ContainsFunc(ents, func(e os.DirEntry) bool {
		return strings.HasSuffix(e.Name(), ".arrows")
	}) {
		t.Error("the outbox wrote a file per batch")
	}
	c.procs[0] = c.start(t, 0, "--resume")
	c.procs[1] = c.start(t, 1)
	c.waitNodes(t, 90*time.Second)
	s := readStats(t, c.dir, 0)
	if s.BatchesResent == 0 || s.OutboxLeft != 0 || s.Epoch != 2 {
		t.Errorf("resumed node 0: epoch %d, resent %d (a checkpoint held %d), left %d", s.Epoch, s.BatchesResent, held, s.OutboxLeft)
	}
	got := c.fetchedAll(t, 2, want)
	if len(got) != len(want) {
		t.Errorf("fetched %d pages, the reference %d", len(got), len(want))
	}
}

// TestClusterStopKeepsOutbox: node 0 crawls while node 1 is down and stops
// on --duration; the batches for node 1 cannot be delivered, so they stay
// in its outbox and are reported. Restarted with --resume beside node 1,
// node 0 resends them and the crawl finishes with every page fetched.
func TestClusterStopKeepsOutbox(t *testing.T) {
	longOnly(t)
	childProcesses(t, "runs three crawls in child processes")
	web := startClusterWeb(t, 12, 30)
	want := controlPages(t, web)
	c := &cluster{dir: t.TempDir(), peers: freePorts(t, 2), web: web, extra: []string{"--min-delay", "20ms"}}
	c.procs = make([]*proc, 2)
	c.procs[0] = c.start(t, 0, "--duration", "3s")
	if err := c.procs[0].wait(t, "node 0", 60*time.Second); err != nil {
		t.Fatalf("node 0: %v", err)
	}
	st := readStats(t, c.dir, 0)
	// The batches left are saved with the node's final checkpoint.
	part := peer.NewOutboxPart()
	f, err := os.Open(filepath.Join(tracefile.NodeDir(c.dir, 0), "state", "checkpoint", peer.OutboxPartName))
	if err == nil {
		err = part.Load(f)
		f.Close()
	}
	if st.StopReason != recorder.StopDuration || st.OutboxLeft == 0 || err != nil || part.Len() < st.OutboxLeft {
		t.Fatalf("stop %s, outbox left %d, checkpoint's outbox holds %d (%v)", st.StopReason, st.OutboxLeft, part.Len(), err)
	}
	var stopped bool
	for _, e := range readEvents(t, c.dir, 0) {
		stopped = stopped || e.Event == "stop"
	}
	if !stopped {
		t.Error("no stop event")
	}
	// The saved configuration leaves the peers' secret out.
	if b, err := os.ReadFile(filepath.Join(tracefile.NodeDir(c.dir, 0), "state", "config.json")); err != nil || bytes.Contains(b, []byte(clusterToken)) {
		t.Errorf("state/config.json (err %v) holds the token", err)
	}
	// A resumed crawl keeps the flags it is not given again, --duration
	// included: lift the limit this time.
	c.procs[0] = c.start(t, 0, "--resume", "--duration", "0")
	c.procs[1] = c.start(t, 1)
	c.waitNodes(t, 60*time.Second)
	if s := readStats(t, c.dir, 0); s.BatchesResent < int64(st.OutboxLeft) || s.OutboxLeft != 0 || s.Epoch != 2 {
		t.Errorf("resumed node 0: epoch %d, resent %d (outbox held %d), left %d", s.Epoch, s.BatchesResent, st.OutboxLeft, s.OutboxLeft)
	}
	c.fetchedAll(t, 2, want)
	if _, err := os.Stat(filepath.Join(tracefile.NodeDir(c.dir, 0), "state", "outbox")); err == nil {
		t.Error("outbox kept after the crawl ended")
	}
}
