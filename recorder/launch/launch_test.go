package launch

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// env is a fake environment: variables, and a host name.
func env(host string, kv ...string) Env {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return Env{
		Lookup:   func(k string) (string, bool) { v, ok := m[k]; return v, ok },
		Hostname: func() (string, error) { return host, nil },
	}
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolve(t *testing.T) {
	peers3 := writeFile(t, "peers", "# the crawl's nodes, node 0 first\n\n10.0.0.1:7400\n10.0.0.2:7400  # node 1\n  10.0.0.3:7400\n")
	peersDup := writeFile(t, "peers-dup", "a:1\nb:1\na:1\n")
	peersBad := writeFile(t, "peers-bad", "a:1\nb\n")
	peersEmpty := writeFile(t, "peers-empty", "# nobody\n\n")
	token := writeFile(t, "token", "s3cret\n")
	tokenEmpty := writeFile(t, "token-empty", " \n")
	tokenTwo := writeFile(t, "token-two", "a\nb\n")
	missing := filepath.Join(t.TempDir(), "missing")
	list := "10.0.0.1:7400,10.0.0.2:7400,10.0.0.3:7400"
	want3 := strings.Split(list, ",")
	k8s := func(host string, kv ...string) Env {
		return env(host, append([]string{EnvKubernetes, "10.96.0.1"}, kv...)...)
	}

	for _, tc := range []struct {
		name string
		in   Input
		env  Env
		want Launch
		err  string // a substring of the error; "" for success
	}{
		// Node id.
		{name: "no source", in: Input{Peers: list}, env: env("laptop"),
			want: Launch{Peers: want3, PeersFrom: "--peers"}},
		{name: "flag", in: Input{NodeID: 2, NodeIDSet: true}, env: env("laptop"),
			want: Launch{NodeID: 2, NodeIDFrom: "--node-id 2"}},
		{name: "flag 0 beats the environment", in: Input{NodeIDSet: true}, env: env("crawl-2", EnvSlurmRank, "1", EnvKubernetes, "x"),
			want: Launch{NodeIDFrom: "--node-id 0"}},
		{name: "CRAWLTRACE_NODE_ID", env: env("h", EnvNodeID, "1"),
			want: Launch{NodeID: 1, NodeIDFrom: "CRAWLTRACE_NODE_ID=1"}},
		{name: "flag and CRAWLTRACE_NODE_ID agree", in: Input{NodeID: 1, NodeIDSet: true}, env: env("h", EnvNodeID, "1"),
			want: Launch{NodeID: 1, NodeIDFrom: "--node-id 1"}},
		{name: "flag and CRAWLTRACE_NODE_ID differ", in: Input{NodeID: 1, NodeIDSet: true}, env: env("h", EnvNodeID, "2"),
			err: "--node-id 1 and CRAWLTRACE_NODE_ID=2 give different node ids"},
		{name: "SLURM_PROCID", env: env("node07", EnvSlurmRank, "3", EnvSlurmTasks, "4"),
			want: Launch{NodeID: 3, NodeIDFrom: "SLURM_PROCID=3"}},
		{name: "CRAWLTRACE_NODE_ID beats SLURM_PROCID in a one-task step", env: env("h", EnvNodeID, "2", EnvSlurmRank, "0", EnvSlurmTasks, "1"),
			want: Launch{NodeID: 2, NodeIDFrom: "CRAWLTRACE_NODE_ID=2"}},
		{name: "flag beats SLURM_PROCID in a batch script", in: Input{NodeID: 2, NodeIDSet: true}, env: env("h", EnvSlurmRank, "0"),
			want: Launch{NodeID: 2, NodeIDFrom: "--node-id 2"}},
		{name: "flag differs from the rank of a step of 3 tasks", in: Input{NodeID: 0, NodeIDSet: true}, env: env("h", EnvSlurmRank, "2", EnvSlurmTasks, "3"),
			err: "--node-id 0 differs from SLURM_PROCID=2, this task's rank in a job step of 3 tasks"},
		{name: "CRAWLTRACE_NODE_ID differs from the rank of a step", env: env("h", EnvNodeID, "0", EnvSlurmRank, "1", EnvSlurmTasks, "3"),
			err: "CRAWLTRACE_NODE_ID=0 differs from SLURM_PROCID=1"},
		{name: "flag equals the rank of a step", in: Input{NodeID: 1, NodeIDSet: true}, env: env("h", EnvSlurmRank, "1", EnvSlurmTasks, "3"),
			want: Launch{NodeID: 1, NodeIDFrom: "--node-id 1"}},
		{name: "pod ordinal", env: k8s("crawl-2"),
			want: Launch{NodeID: 2, NodeIDFrom: "the ordinal of pod crawl-2"}},
		{name: "pod ordinal of a full host name", env: k8s("crawl-12.crawl.default.svc.cluster.local"),
			want: Launch{NodeID: 12, NodeIDFrom: "the ordinal of pod crawl-12"}},
		{name: "no ordinal outside Kubernetes", env: env("build-3"), want: Launch{}},
		{name: "pod without an ordinal", env: k8s("crawl"), want: Launch{}},
		{name: "CRAWLTRACE_NODE_ID beats the ordinal", env: k8s("crawl-2", EnvNodeID, "5"),
			want: Launch{NodeID: 5, NodeIDFrom: "CRAWLTRACE_NODE_ID=5"}},
		{name: "empty variable is not set", env: env("h", EnvNodeID, "", EnvSlurmRank, "1"),
			want: Launch{NodeID: 1, NodeIDFrom: "SLURM_PROCID=1"}},
		{name: "bad CRAWLTRACE_NODE_ID", env: env("h", EnvNodeID, "one"), err: `CRAWLTRACE_NODE_ID="one" is not a node id`},
		{name: "negative SLURM_PROCID", env: env("h", EnvSlurmRank, "-1"), err: `SLURM_PROCID="-1" is not a node id`},
		{name: "negative flag", in: Input{NodeID: -1, NodeIDSet: true}, env: env("h"), err: "--node-id -1"},

		// Peers.
		{name: "peers file", in: Input{PeersFile: peers3}, env: env("h", EnvSlurmRank, "2"),
			want: Launch{NodeID: 2, NodeIDFrom: "SLURM_PROCID=2", Peers: want3, PeersFrom: "--peers-file " + peers3}},
		{name: "peers and an equal peers file", in: Input{Peers: list, PeersFile: peers3}, env: env("h"),
			want: Launch{Peers: want3, PeersFrom: "--peers-file " + peers3}},
		{name: "peers and another peers file", in: Input{Peers: "a:1,b:1,c:1", PeersFile: peers3}, env: env("h"),
			err: "--peers and --peers-file " + peers3 + " give different peers"},
		{name: "node id out of range", in: Input{PeersFile: peers3}, env: k8s("crawl-3"),
			err: "node id 3 (from the ordinal of pod crawl-3) is out of range for the 3 peers of --peers-file"},
		{name: "peers file missing", in: Input{PeersFile: missing}, env: env("h"), err: "peers file " + missing + ": no such file or directory"},
		{name: "peers file empty", in: Input{PeersFile: peersEmpty}, env: env("h"), err: "lists no peers"},
		{name: "peers file duplicate", in: Input{PeersFile: peersDup}, env: env("h"), err: "line 1 and peers file " + peersDup + " line 3 are both a:1"},
		{name: "peers file not host:port", in: Input{PeersFile: peersBad}, env: env("h"), err: `line 2: "b" is not host:port`},
		{name: "peers not host:port", in: Input{Peers: "a:1,b"}, env: env("h"), err: `--peers entry 1: "b" is not host:port`},
		{name: "rendezvous and peers", in: Input{Peers: list, Rendezvous: "/shared/r"}, env: env("h"),
			err: "--peers and --rendezvous /shared/r both give the peers"},
		{name: "rendezvous and peers file", in: Input{PeersFile: peers3, Rendezvous: "/shared/r", RendezvousNodes: 3}, env: env("h"),
			err: "--peers-file " + peers3 + " and --rendezvous /shared/r both give the peers"},
		{name: "rendezvous under srun", in: Input{Rendezvous: "/shared/r"}, env: env("h", EnvSlurmRank, "1", EnvSlurmTasks, "4"),
			want: Launch{NodeID: 1, NodeIDFrom: "SLURM_PROCID=1", Rendezvous: "/shared/r", RendezvousNodes: 4, PeersFrom: "--rendezvous /shared/r"}},
		{name: "rendezvous nodes given", in: Input{Rendezvous: "/shared/r", RendezvousNodes: 2}, env: env("h", EnvNodeID, "1"),
			want: Launch{NodeID: 1, NodeIDFrom: "CRAWLTRACE_NODE_ID=1", Rendezvous: "/shared/r", RendezvousNodes: 2, PeersFrom: "--rendezvous /shared/r"}},
		{name: "rendezvous nodes differ from the step", in: Input{Rendezvous: "/r", RendezvousNodes: 3}, env: env("h", EnvSlurmRank, "1", EnvSlurmTasks, "4"),
			err: "--rendezvous-nodes 3 and SLURM_STEP_NUM_TASKS=4 differ"},
		{name: "rendezvous without a count", in: Input{Rendezvous: "/r"}, env: env("h"), err: "--rendezvous /r needs the number of nodes"},
		{name: "rendezvous node out of range", in: Input{Rendezvous: "/r", RendezvousNodes: 2}, env: env("h", EnvNodeID, "2"),
			err: "node id 2 (from CRAWLTRACE_NODE_ID=2) is out of range for a rendezvous of 2 nodes"},
		{name: "rendezvous nodes without rendezvous", in: Input{RendezvousNodes: 2}, env: env("h"), err: "--rendezvous-nodes needs --rendezvous"},

		// Token.
		{name: "token flag", in: Input{Token: "t"}, env: env("h"), want: Launch{Token: "t", TokenFrom: "--token"}},
		{name: "token file", in: Input{TokenFile: token}, env: env("h"), want: Launch{Token: "s3cret", TokenFrom: "--token-file " + token}},
		{name: "token environment", env: env("h", EnvToken, "e"), want: Launch{Token: "e", TokenFrom: "CRAWLTRACE_TOKEN"}},
		{name: "token file and equal environment", in: Input{TokenFile: token}, env: env("h", EnvToken, "s3cret"),
			want: Launch{Token: "s3cret", TokenFrom: "--token-file " + token}},
		{name: "token flag and file differ", in: Input{Token: "t", TokenFile: token}, env: env("h"),
			err: "--token and --token-file " + token + " give different tokens"},
		{name: "token file and environment differ", in: Input{TokenFile: token}, env: env("h", EnvToken, "other"),
			err: "--token-file " + token + " and CRAWLTRACE_TOKEN give different tokens"},
		{name: "token flag and environment differ", in: Input{Token: "t"}, env: env("h", EnvToken, "other"),
			err: "--token and CRAWLTRACE_TOKEN give different tokens"},
		{name: "token file missing", in: Input{TokenFile: missing}, env: env("h"), err: "token file " + missing + ": no such file"},
		{name: "token file empty", in: Input{TokenFile: tokenEmpty}, env: env("h"), err: "is empty"},
		{name: "token file of two lines", in: Input{TokenFile: tokenTwo}, env: env("h"), err: "more than one line"},

		// Crawl id.
		{name: "crawl id flag", in: Input{CrawlID: "c1"}, env: env("h", EnvSlurmJob, "42"),
			want: Launch{CrawlID: "c1", CrawlIDFrom: "--crawl-id"}},
		{name: "crawl id from the job", env: env("h", EnvSlurmJob, "42"),
			want: Launch{CrawlID: "slurm-42", CrawlIDFrom: "SLURM_JOB_ID=42"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.in, tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				if !errors.Is(err, ErrInput) {
					t.Errorf("error %v is not ErrInput", err)
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "other") {
					t.Errorf("error %q shows a token", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Peers, tc.want.Peers) {
				t.Errorf("peers %q, want %q", got.Peers, tc.want.Peers)
			}
			got.Peers, tc.want.Peers = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFromLauncher(t *testing.T) {
	for _, tc := range []struct {
		l    Launch
		want bool
	}{
		{Launch{}, false},
		{Launch{NodeIDFrom: "--node-id 1", PeersFrom: "--peers", CrawlIDFrom: "--crawl-id"}, false},
		{Launch{NodeIDFrom: "SLURM_PROCID=1"}, true},
		{Launch{PeersFrom: "--peers-file f"}, true},
		{Launch{Rendezvous: "/r", PeersFrom: "--rendezvous /r"}, true},
		{Launch{CrawlIDFrom: "SLURM_JOB_ID=4"}, true},
	} {
		if got := tc.l.FromLauncher(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.l, got, tc.want)
		}
	}
}
