package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/launch"
)

// launchHelp is the crawl command's paragraph on the flags a launcher
// uses (recorder/launch).
const launchHelp = `A launcher gives each node its identity (docs/cluster.md, "Crawl"). The
node id is the first given of --node-id, $CRAWLTRACE_NODE_ID, $SLURM_PROCID
(the task's rank under srun) and, in a Kubernetes pod, the ordinal N of a
host name NAME-N (a StatefulSet pod's); else 0. --node-id and
$CRAWLTRACE_NODE_ID must agree, and in a job step of several tasks they
must equal the rank. The peers come from one of --peers, --peers-file FILE
(one host:port a line, node 0 first, # comments) and --rendezvous DIR: each
node writes its --listen address (a wildcard host becomes the host name)
to DIR on storage every node sees and waits, at most --rendezvous-timeout,
for the --rendezvous-nodes nodes (under srun: the step's tasks). The token
comes from --token, --token-file FILE or $CRAWLTRACE_TOKEN (ps shows the
command line, not the file or the environment); two that differ are an
error. --crawl-id defaults to slurm-$SLURM_JOB_ID in a Slurm job.`

// launchFlags binds the crawl flags a launcher uses into the input of
// recorder/launch.
type launchFlags struct {
	in                launch.Input
	rendezvousTimeout time.Duration
	crawlIDFrom       string // where the crawl id came from, once applied
	coresNote         string // what shareCores did, said at the crawl's end
	coresWere         int    // GOMAXPROCS before shareCores changed it; 0 if it did not
}

// register adds the flags that are not the crawl's own: --peers and
// --token stay beside --node-id and --listen in the crawl's flag list.
func (l *launchFlags) register(f *pflag.FlagSet) {
	f.StringVar(&l.in.PeersFile, "peers-file", "", "file of every node's host:port, one a line, node 0 first (# comments; TCP mode)")
	f.StringVar(&l.in.Rendezvous, "rendezvous", "", "directory on shared storage where the nodes exchange their --listen addresses (TCP mode)")
	f.IntVar(&l.in.RendezvousNodes, "rendezvous-nodes", 0, "nodes meeting at --rendezvous (default: the Slurm job step's tasks)")
	f.DurationVar(&l.rendezvousTimeout, "rendezvous-timeout", launch.DefaultRendezvousTimeout, "how long to wait at --rendezvous for every node")
	f.StringVar(&l.in.TokenFile, "token-file", "", "file holding the token, kept off the command line (or $"+launch.EnvToken+")")
}

// resolve resolves the launch from the flags and the environment, and
// sets the node id, which a resume needs to find the node's saved
// configuration. The rest is set by apply, after a resume's merge.
func (l *launchFlags) resolve(cmd *cobra.Command, cfg *recorder.Config) (launch.Launch, error) {
	l.in.NodeID, l.in.NodeIDSet = cfg.NodeID, cmd.Flags().Changed("node-id")
	l.in.CrawlID = cfg.CrawlID
	ln, err := launch.Resolve(l.in, launch.OSEnv())
	if err != nil {
		return ln, launchErr(err)
	}
	cfg.NodeID = ln.NodeID
	return ln, nil
}

// apply sets the peers, the token and (on a fresh start) the crawl id.
// A resume keeps its saved crawl id unless --crawl-id says otherwise. A
// node of a TCP crawl without a token fails here, before it waits at a
// rendezvous.
func (l *launchFlags) apply(cfg *recorder.Config, ln launch.Launch, resume bool) error {
	cfg.NodeID = ln.NodeID
	if ln.Peers != nil {
		cfg.Peers = ln.Peers
	}
	if ln.Token != "" {
		cfg.Token = ln.Token
	}
	l.crawlIDFrom = "default"
	switch {
	case ln.CrawlID != "" && (!resume || ln.CrawlIDFrom == "--crawl-id"):
		cfg.CrawlID, l.crawlIDFrom = ln.CrawlID, ln.CrawlIDFrom
	case resume:
		l.crawlIDFrom = "saved"
	}
	if (len(cfg.Peers) > 0 || ln.Rendezvous != "") && cfg.Token == "" {
		return badInput("crawl: the nodes need a shared token: --token-file FILE, $%s or --token", launch.EnvToken)
	}
	return nil
}

// join meets the other nodes at the rendezvous, when there is one, and
// says on stderr where the node took what a launcher gave it.
func (l *launchFlags) join(ctx context.Context, cmd *cobra.Command, cfg *recorder.Config, ln launch.Launch) error {
	if ln.Rendezvous != "" {
		addr, err := launch.PublishAddr(cfg.Listen, os.Hostname)
		if err != nil {
			return launchErr(err)
		}
		if cfg.CrawlID == "" {
			return badInput("crawl: --rendezvous needs a crawl id (--crawl-id, or a Slurm job's)")
		}
		r := launch.Rendezvous{Dir: ln.Rendezvous, Node: ln.NodeID, Nodes: ln.RendezvousNodes, Addr: addr,
			CrawlID: cfg.CrawlID, Timeout: l.rendezvousTimeout}
		start := time.Now()
		if cfg.Peers, err = r.Join(ctx); err != nil {
			return launchErr(err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "crawl: rendezvous %s: %d nodes in %.1fs\n", ln.Rendezvous, len(cfg.Peers), time.Since(start).Seconds())
	}
	l.shareCores(cfg, launch.ThisMachine())
	if ln.FromLauncher() && len(cfg.Peers) > 0 {
		nodeFrom := ln.NodeIDFrom
		if nodeFrom == "" {
			nodeFrom = "default"
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "crawl: node %d of %d (node id: %s; peers: %s; crawl id %s: %s); listening on %s\n",
			cfg.NodeID, len(cfg.Peers), nodeFrom, ln.PeersFrom, cfg.CrawlID, l.crawlIDFrom, listenOf(cfg))
	}
	return nil
}

// shareCores divides the machine's cores among the crawl's nodes that run
// on it when nothing else divided them (launch.Procs); the crawl's end
// says so (coresNote), so that a refusal or a finished crawl stays one
// line.
func (l *launchFlags) shareCores(cfg *recorder.Config, m launch.Machine) {
	procs, here := launch.Procs(cfg.Peers, cfg.NodeID, m)
	if procs == m.GOMAXPROCS {
		return
	}
	l.coresWere = runtime.GOMAXPROCS(procs)
	l.coresNote = fmt.Sprintf("crawl: %d nodes of this crawl on this machine's %d CPUs: this one ran with GOMAXPROCS=%d (set GOMAXPROCS to choose)",
		here, m.Online, procs)
}

// restoreCores undoes shareCores when the crawl is over (the command may
// run in a process that goes on: tests run it in theirs).
func (l *launchFlags) restoreCores() {
	if l.coresWere > 0 {
		runtime.GOMAXPROCS(l.coresWere)
	}
}

func listenOf(cfg *recorder.Config) string {
	if cfg.Listen != "" {
		return cfg.Listen
	}
	return cfg.Peers[cfg.NodeID]
}

// launchErr makes the launch package's input errors usage errors (exit
// status 2) under the crawl command's name.
func launchErr(err error) error {
	if errors.Is(err, launch.ErrInput) {
		return badInput("crawl: %s", strings.TrimPrefix(err.Error(), "launch: "))
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("crawl: %s", strings.TrimPrefix(err.Error(), "launch: "))
}
