// Package launch resolves what a launcher tells one node of a TCP crawl
// about itself: its node id, its peers, the token the nodes share and the
// crawl id. They come from flags, files, the environment a batch system
// or an orchestrator sets, and a rendezvous directory on shared storage,
// so that one `srun` of N tasks, or one StatefulSet of N pods, starts the
// N nodes of a crawl with one command line (docs/cluster.md, "Crawl").
//
// [Resolve] applies the precedence below to an [Input] (the flags) and an
// [Env] (the environment and host name); it reads files but never waits.
// [Rendezvous.Join] is the one step that waits: each node writes its
// address into a shared directory and waits, for a bounded time, for every
// other node's. [Procs] says how many threads a node should run when
// several nodes of the crawl share one machine.
//
// Precedence, the first source present winning:
//
//	node id   --node-id, $CRAWLTRACE_NODE_ID, $SLURM_PROCID (the task's
//	          rank), in a Kubernetes pod ($KUBERNETES_SERVICE_HOST set) the
//	          ordinal N of a host name NAME-N (a StatefulSet pod's), else 0
//	peers     one of --peers, --peers-file, --rendezvous
//	token     --token, --token-file, $CRAWLTRACE_TOKEN
//	crawl id  --crawl-id, slurm-$SLURM_JOB_ID
//
// An environment variable set to the empty string counts as not set.
// Two sources of one value that are both given must agree, or the
// resolution fails naming both: --node-id and $CRAWLTRACE_NODE_ID; either
// of them and $SLURM_PROCID in a job step of several tasks
// ($SLURM_STEP_NUM_TASKS > 1), where every task has its own rank and a
// node id given on the shared command line can only be a mistake; any two
// of the token's sources (the error never shows a token); --peers and
// --peers-file; --rendezvous-nodes and $SLURM_STEP_NUM_TASKS. A rendezvous
// with any other source of peers is refused. What an engine gives but a
// user may override without error: the pod ordinal (a host name may end
// in -N by chance) and the job id.
//
// Every error of [Resolve] is caused by its input and matches [ErrInput]
// under errors.Is; so are the errors of [Rendezvous.Join] that a launch
// given other flags would not have met.
package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The environment variables [Resolve] reads.
const (
	EnvNodeID     = "CRAWLTRACE_NODE_ID"   // a node id given by the launcher
	EnvToken      = "CRAWLTRACE_TOKEN"     // the token, kept off the command line
	EnvSlurmRank  = "SLURM_PROCID"         // the task's rank in its Slurm job step
	EnvSlurmTasks = "SLURM_STEP_NUM_TASKS" // the number of tasks of the Slurm job step
	EnvSlurmJob   = "SLURM_JOB_ID"         // the Slurm job id
	EnvKubernetes = "KUBERNETES_SERVICE_HOST"
)

// ErrInput marks an error caused by what the launcher gave: a flag, a
// file, an environment variable, or sources that disagree.
var ErrInput = errors.New("launch: bad input")

// inputError is an error matching [ErrInput] whose message does not
// repeat it.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrInput }

func bad(format string, args ...any) error {
	return &inputError{"launch: " + fmt.Sprintf(format, args...)}
}

// Input is what the command line gave. A zero field is a source not
// given, except NodeID, which counts when NodeIDSet.
type Input struct {
	NodeID    int // --node-id
	NodeIDSet bool
	// Peers is the comma-separated list of --peers.
	Peers string
	// PeersFile names a file of one host:port a line, by node id; blank
	// lines and # comments are skipped.
	PeersFile string
	// Rendezvous is a directory on storage every node sees, where the
	// nodes meet ([Rendezvous]); RendezvousNodes is their number.
	Rendezvous      string
	RendezvousNodes int
	Token           string // --token
	TokenFile       string // a file holding the token (trailing white space dropped)
	CrawlID         string // --crawl-id
}

// Env is where [Resolve] reads the environment and the host name.
type Env struct {
	Lookup   func(key string) (string, bool)
	Hostname func() (string, error)
}

// OSEnv is the process's environment and host name.
func OSEnv() Env { return Env{Lookup: os.LookupEnv, Hostname: os.Hostname} }

// get returns the variable's value; set but empty counts as not set.
func (e Env) get(key string) (string, bool) {
	if e.Lookup == nil {
		return "", false
	}
	v, ok := e.Lookup(key)
	return v, ok && v != ""
}

// Launch is a resolved launch. Each *From field names the source of its
// value ("--node-id 2", "SLURM_PROCID=2", "--peers-file FILE", ...), empty
// for a default.
type Launch struct {
	NodeID     int
	NodeIDFrom string
	// Peers is nil when no source gives them, or when they are to be
	// found at the Rendezvous.
	Peers     []string
	PeersFrom string
	// Rendezvous is the directory of a rendezvous of RendezvousNodes
	// nodes ([Rendezvous]), empty without one.
	Rendezvous      string
	RendezvousNodes int
	Token           string
	TokenFrom       string
	// CrawlID is empty when neither --crawl-id nor a job gives one.
	CrawlID     string
	CrawlIDFrom string
}

// FromLauncher reports whether the node id, the peers or the crawl id
// came from somewhere other than the command line's --node-id, --peers
// and --crawl-id, so that a node says where it took them.
func (l *Launch) FromLauncher() bool {
	return (l.NodeIDFrom != "" && !strings.HasPrefix(l.NodeIDFrom, "--")) || l.Rendezvous != "" ||
		(l.PeersFrom != "" && l.PeersFrom != "--peers") || (l.CrawlIDFrom != "" && l.CrawlIDFrom != "--crawl-id")
}

// ordinalRE is the ordinal at the end of a StatefulSet pod's name.
var ordinalRE = regexp.MustCompile(`-([0-9]+)$`)

// Resolve applies the package's precedence to in and env.
func Resolve(in Input, env Env) (Launch, error) {
	var l Launch
	if err := resolveNode(&l, in, env); err != nil {
		return Launch{}, err
	}
	if err := resolvePeers(&l, in, env); err != nil {
		return Launch{}, err
	}
	if err := resolveToken(&l, in, env); err != nil {
		return Launch{}, err
	}
	switch job, ok := env.get(EnvSlurmJob); {
	case in.CrawlID != "":
		l.CrawlID, l.CrawlIDFrom = in.CrawlID, "--crawl-id"
	case ok:
		l.CrawlID, l.CrawlIDFrom = "slurm-"+job, EnvSlurmJob+"="+job
	}
	return l, nil
}

func resolveNode(l *Launch, in Input, env Env) error {
	type source struct {
		id   int
		from string
	}
	var given []source
	envID := func(key string) error {
		v, ok := env.get(key)
		if !ok {
			return nil
		}
		id, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || id < 0 {
			return bad("%s=%q is not a node id (want 0, 1, ...)", key, v)
		}
		given = append(given, source{id, key + "=" + v})
		return nil
	}
	if in.NodeIDSet {
		if in.NodeID < 0 {
			return bad("--node-id %d: want 0, 1, ...", in.NodeID)
		}
		given = append(given, source{in.NodeID, "--node-id " + strconv.Itoa(in.NodeID)})
	}
	if err := envID(EnvNodeID); err != nil {
		return err
	}
	explicit := len(given)
	if err := envID(EnvSlurmRank); err != nil {
		return err
	}
	if len(given) == 0 && env.Hostname != nil {
		if _, ok := env.get(EnvKubernetes); ok {
			if h, err := env.Hostname(); err == nil {
				h, _, _ = strings.Cut(h, ".")
				if m := ordinalRE.FindStringSubmatch(h); m != nil {
					id, err := strconv.Atoi(m[1])
					if err != nil {
						return bad("host name %q: ordinal %s is not a node id", h, m[1])
					}
					given = append(given, source{id, "the ordinal of pod " + h})
				}
			}
		}
	}
	if len(given) == 0 {
		return nil
	}
	if explicit == 2 && given[0].id != given[1].id {
		return bad("%s and %s give different node ids; give one", given[0].from, given[1].from)
	}
	if explicit > 0 && len(given) > explicit {
		rank := given[explicit]
		if n, ok := env.get(EnvSlurmTasks); ok && n != "1" && rank.id != given[0].id {
			return bad("%s differs from %s, this task's rank in a job step of %s tasks: every task of the step is given the same command line, so leave the node id to the rank", given[0].from, rank.from, n)
		}
	}
	l.NodeID, l.NodeIDFrom = given[0].id, given[0].from
	return nil
}

func resolvePeers(l *Launch, in Input, env Env) error {
	var from []string
	if in.Peers != "" {
		from = append(from, "--peers")
	}
	if in.PeersFile != "" {
		from = append(from, "--peers-file "+in.PeersFile)
	}
	if in.Rendezvous != "" {
		from = append(from, "--rendezvous "+in.Rendezvous)
	}
	if in.Rendezvous != "" && len(from) > 1 {
		return bad("%s and %s both give the peers; give one", from[0], from[1])
	}
	if in.Peers != "" {
		l.Peers, l.PeersFrom = strings.Split(in.Peers, ","), "--peers"
		if err := checkPeers(l.Peers, func(i int) string { return fmt.Sprintf("--peers entry %d", i) }); err != nil {
			return err
		}
	}
	if in.PeersFile != "" {
		peers, err := ReadPeersFile(in.PeersFile)
		if err != nil {
			return err
		}
		if l.Peers != nil && !slices.Equal(l.Peers, peers) {
			return bad("--peers and --peers-file %s give different peers; give one", in.PeersFile)
		}
		l.Peers, l.PeersFrom = peers, "--peers-file "+in.PeersFile
	}
	if l.Peers != nil && l.NodeID >= len(l.Peers) {
		return bad("node id %d (%s) is out of range for the %d peers of %s", l.NodeID, l.nodeIDSource(), len(l.Peers), l.PeersFrom)
	}
	if in.Rendezvous == "" {
		if in.RendezvousNodes != 0 {
			return bad("--rendezvous-nodes needs --rendezvous DIR")
		}
		return nil
	}
	l.Rendezvous, l.PeersFrom = in.Rendezvous, "--rendezvous "+in.Rendezvous
	tasks, stepped := env.get(EnvSlurmTasks)
	n, err := strconv.Atoi(tasks)
	if stepped && (err != nil || n < 1) {
		return bad("%s=%q is not a number of tasks", EnvSlurmTasks, tasks)
	}
	switch {
	case in.RendezvousNodes < 0:
		return bad("--rendezvous-nodes %d: want at least 1", in.RendezvousNodes)
	case in.RendezvousNodes > 0 && stepped && in.RendezvousNodes != n:
		return bad("--rendezvous-nodes %d and %s=%s differ; give one", in.RendezvousNodes, EnvSlurmTasks, tasks)
	case in.RendezvousNodes > 0:
		l.RendezvousNodes = in.RendezvousNodes
	case stepped:
		l.RendezvousNodes = n
	default:
		return bad("--rendezvous %s needs the number of nodes: --rendezvous-nodes N (under srun, the job step's number of tasks)", in.Rendezvous)
	}
	if l.NodeID >= l.RendezvousNodes {
		return bad("node id %d (%s) is out of range for a rendezvous of %d nodes", l.NodeID, l.nodeIDSource(), l.RendezvousNodes)
	}
	return nil
}

// nodeIDSource says where the node id came from, for error messages.
func (l *Launch) nodeIDSource() string {
	if l.NodeIDFrom == "" {
		return "the default"
	}
	return "from " + l.NodeIDFrom
}

// checkPeers checks that every peer is host:port and that no two are the
// same.
func checkPeers(peers []string, where func(i int) string) error {
	seen := map[string]int{}
	for i, p := range peers {
		if _, port, err := net.SplitHostPort(p); err != nil || port == "" {
			return bad("%s: %q is not host:port", where(i), p)
		}
		if j, ok := seen[p]; ok {
			return bad("%s and %s are both %s: two nodes cannot share an address", where(j), where(i), p)
		}
		seen[p] = i
	}
	return nil
}

// ReadPeersFile reads a peers file: one host:port a line, node 0 first;
// blank lines and lines starting with # are skipped, and so is what
// follows a # on a line.
func ReadPeersFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, bad("peers file %s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	var peers []string
	var lines []int
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		peers = append(peers, line)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, bad("peers file %s: %v", path, err)
	}
	if len(peers) == 0 {
		return nil, bad("peers file %s lists no peers (want one host:port a line, node 0 first)", path)
	}
	err = checkPeers(peers, func(i int) string { return fmt.Sprintf("peers file %s line %d", path, lines[i]) })
	return peers, err
}

// maxTokenFile bounds a token file's size: a larger file is not a token.
const maxTokenFile = 4096

func resolveToken(l *Launch, in Input, env Env) error {
	type source struct{ token, from string }
	var given []source
	if in.Token != "" {
		given = append(given, source{in.Token, "--token"})
	}
	if in.TokenFile != "" {
		t, err := ReadTokenFile(in.TokenFile)
		if err != nil {
			return err
		}
		given = append(given, source{t, "--token-file " + in.TokenFile})
	}
	if t, ok := env.get(EnvToken); ok {
		given = append(given, source{t, EnvToken})
	}
	for _, s := range given[min(1, len(given)):] {
		if s.token != given[0].token {
			return bad("%s and %s give different tokens; give one", given[0].from, s.from)
		}
	}
	if len(given) > 0 {
		l.Token, l.TokenFrom = given[0].token, given[0].from
	}
	return nil
}

// ReadTokenFile reads a token from a file (a mounted Kubernetes Secret, a
// file of mode 0600), without its leading and trailing white space.
func ReadTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", bad("token file %s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", bad("token file %s: %v", path, unwrapPath(err))
	}
	if len(b) > maxTokenFile {
		return "", bad("token file %s is larger than %d bytes: not a token", path, maxTokenFile)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", bad("token file %s is empty", path)
	}
	if strings.ContainsAny(t, "\r\n") {
		return "", bad("token file %s holds more than one line", path)
	}
	return t, nil
}

// unwrapPath drops the operation and path of a *PathError, which the
// caller's message names already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
