package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Rendezvous is a meeting of the nodes of one crawl in a directory every
// node sees (a shared file system), for launchers that know each task's
// rank but not the other tasks' addresses (srun). Each node writes its
// address to DIR/node-NNN.json and waits until every node's file is
// there; the peers are then the addresses in node order.
//
// A file names its crawl id and the number of nodes. A file of another
// crawl id is left from an earlier launch: a node replaces its own, and
// waits for its peers to replace theirs. A node that finds its own file
// from this crawl with another address (two tasks given one node id) or
// a peer's file with another number of nodes stops with an [ErrInput]
// error naming both; a node that registers again at the address its file
// holds (a restarted node) goes on. The wait is bounded by Timeout.
//
// A Rendezvous is a value; Join may be called by one goroutine at a time
// per node.
type Rendezvous struct {
	Dir     string
	Node    int    // this node's id
	Nodes   int    // the number of nodes that meet
	Addr    string // this node's address, host:port, as its peers dial it
	CrawlID string // the crawl's id, the same on every node
	// Timeout bounds the wait for the other nodes. Default 10 minutes.
	Timeout time.Duration
	// Poll is the interval between two looks at the directory. Default
	// 200 ms. (On NFS a file may take up to the directory attribute cache
	// time, acdirmax, to show.)
	Poll time.Duration
}

// DefaultRendezvousTimeout is [Rendezvous.Timeout]'s default.
const DefaultRendezvousTimeout = 10 * time.Minute

// rendezvousFile is what a node writes.
type rendezvousFile struct {
	CrawlID string `json:"crawl_id"`
	Node    int    `json:"node"`
	Nodes   int    `json:"nodes"`
	Addr    string `json:"addr"`
}

// RendezvousName is node's file in a rendezvous directory.
func RendezvousName(node int) string { return fmt.Sprintf("node-%03d.json", node) }

// Join registers this node and waits until every node has registered;
// it returns the peers, in node order. It fails when ctx is done (with
// ctx's error), after Timeout, or on a file that contradicts this node.
func (r Rendezvous) Join(ctx context.Context) ([]string, error) {
	if r.Nodes < 1 || r.Node < 0 || r.Node >= r.Nodes {
		return nil, bad("rendezvous %s: node %d of %d nodes", r.Dir, r.Node, r.Nodes)
	}
	if r.CrawlID == "" {
		return nil, bad("rendezvous %s: no crawl id", r.Dir)
	}
	if _, port, err := net.SplitHostPort(r.Addr); err != nil || port == "" || port == "0" {
		return nil, bad("rendezvous %s: this node's address %q is not host:port with a port", r.Dir, r.Addr)
	}
	timeout, poll := r.Timeout, r.Poll
	if timeout <= 0 {
		timeout = DefaultRendezvousTimeout
	}
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	me := rendezvousFile{CrawlID: r.CrawlID, Node: r.Node, Nodes: r.Nodes, Addr: r.Addr}
	if err := r.register(me); err != nil {
		return nil, err
	}
	peers := make([]string, r.Nodes)
	peers[r.Node] = r.Addr
	missing := r.Nodes - 1
	stale := map[int]string{} // node -> the crawl id its file holds
	deadline := time.Now().Add(timeout)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		for i := range peers {
			if peers[i] != "" {
				continue
			}
			f, ok, err := r.read(i)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if f.CrawlID != r.CrawlID {
				stale[i] = f.CrawlID
				continue
			}
			delete(stale, i)
			if f.Nodes != r.Nodes {
				return nil, bad("rendezvous %s: node %d registered for %d nodes (%s), this node %d for %d", r.Dir, i, f.Nodes, filepath.Join(r.Dir, RendezvousName(i)), r.Node, r.Nodes)
			}
			peers[i] = f.Addr
			missing--
		}
		if missing == 0 {
			return peers, checkPeers(peers, func(i int) string { return filepath.Join(r.Dir, RendezvousName(i)) })
		}
		if !time.Now().Before(deadline) {
			return nil, r.timedOut(peers, stale, timeout)
		}
		t.Reset(min(poll, time.Until(deadline)))
	}
}

// register writes this node's file: under a temporary name, then linked
// to its own (so that of two tasks given one node id, the second finds
// the first's file), or renamed over a file left by another crawl.
func (r Rendezvous) register(me rendezvousFile) error {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return bad("rendezvous: %v", err)
	}
	name := filepath.Join(r.Dir, RendezvousName(me.Node))
	tmp, err := os.CreateTemp(r.Dir, "."+RendezvousName(me.Node)+".*")
	if err != nil {
		return bad("rendezvous: %v", err)
	}
	defer os.Remove(tmp.Name())
	b, _ := json.Marshal(me)
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("launch: rendezvous: %w", err)
	}
	if os.Link(tmp.Name(), name) == nil {
		return nil
	}
	// The name is taken, or the file system has no hard links (then the
	// check below and the rename stand in for the link, less atomically).
	old, ok, err := r.read(me.Node)
	if err != nil {
		return err
	}
	if ok && old.CrawlID == me.CrawlID {
		if old.Addr != me.Addr || old.Nodes != me.Nodes {
			return bad("rendezvous %s: node %d of crawl %s is already registered at %s for %d nodes (%s), not at %s for %d: two tasks were given node id %d, or the directory is left from an earlier launch of this crawl with other addresses",
				r.Dir, me.Node, me.CrawlID, old.Addr, old.Nodes, name, me.Addr, me.Nodes, me.Node)
		}
		return nil // this node again, at the same address
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("launch: rendezvous: %w", err)
	}
	return nil
}

// read reads node i's file; ok is false when there is none yet.
func (r Rendezvous) read(i int) (f rendezvousFile, ok bool, err error) {
	name := filepath.Join(r.Dir, RendezvousName(i))
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("launch: rendezvous: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Node != i || f.Addr == "" {
		return f, false, bad("rendezvous %s: %s is not node %d's rendezvous file", r.Dir, name, i)
	}
	return f, true, nil
}

// timedOut says which nodes never came.
func (r Rendezvous) timedOut(peers []string, stale map[int]string, timeout time.Duration) error {
	var waiting []string
	came := 0
	for i, p := range peers {
		if p != "" {
			came++
			continue
		}
		w := strconv.Itoa(i)
		if id, ok := stale[i]; ok {
			w += fmt.Sprintf(" (its file is of crawl %s, not %s)", id, r.CrawlID)
		}
		waiting = append(waiting, w)
	}
	return fmt.Errorf("launch: rendezvous %s: %d of %d nodes registered within %s; no node %s (were they all started, with one --rendezvous directory on storage they share?)",
		r.Dir, came, r.Nodes, timeout, strings.Join(waiting, ", "))
}

// PublishAddr is the address a node listening on listen gives its peers:
// listen itself, or, when its host is empty or unspecified (":7400",
// "0.0.0.0:7400"), the machine's host name with its port.
func PublishAddr(listen string, hostname func() (string, error)) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" || port == "0" {
		return "", bad("--listen %q: a rendezvous needs host:port with a fixed port, the address this node gives its peers", listen)
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return listen, nil
	}
	h, err := hostname()
	if err != nil || h == "" {
		return "", bad("--listen %q: no host name to give the peers (%v); give --listen HOST:PORT", listen, err)
	}
	return net.JoinHostPort(h, port), nil
}
