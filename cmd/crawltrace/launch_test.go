package main

import (
	"github.com/crawltrace/crawltrace/internal/tracefile"

	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/launch"
)

// clearLaunchEnv unsets, for the test, what a launcher sets, so that the
// environment the tests run in does not leak into them.
func clearLaunchEnv(t *testing.T) {
	for _, k := range []string{launch.EnvNodeID, launch.EnvToken, launch.EnvSlurmRank, launch.EnvSlurmTasks, launch.EnvSlurmJob, launch.EnvKubernetes} {
		t.Setenv(k, "") // empty counts as not set
	}
}

// The launch flags' mistakes exit 2 with one line naming both sources of
// a value, before the crawl starts, and never show a token.
func TestLaunchFlagsExit2(t *testing.T) {
	clearLaunchEnv(t)
	dir := t.TempDir()
	peers := filepath.Join(dir, "peers")
	os.WriteFile(peers, []byte("127.0.0.1:7400\n127.0.0.1:7401\n"), 0o644)
	empty := filepath.Join(dir, "empty-token")
	os.WriteFile(empty, []byte("\n"), 0o600)
	out := filepath.Join(dir, "crawl")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{launch.EnvNodeID, "2"}, []string{"--node-id", "1", "--peers-file", peers},
			"crawl: --node-id 1 and CRAWLTRACE_NODE_ID=2 give different node ids; give one"},
		{[]string{launch.EnvSlurmRank, "2", launch.EnvSlurmTasks, "3"}, []string{"--node-id", "0", "--peers-file", peers},
			"--node-id 0 differs from SLURM_PROCID=2, this task's rank in a job step of 3 tasks"},
		{[]string{launch.EnvToken, "env-secret-1"}, []string{"--token", "flag-secret-2", "--peers-file", peers},
			"crawl: --token and CRAWLTRACE_TOKEN give different tokens; give one"},
		{nil, []string{"--token-file", empty, "--peers-file", peers}, "token file " + empty + " is empty"},
		{nil, []string{"--peers", "127.0.0.1:1,127.0.0.1:2", "--peers-file", peers},
			"--peers and --peers-file " + peers + " give different peers"},
		{nil, []string{"--peers-file", filepath.Join(dir, "nope")}, "peers file " + filepath.Join(dir, "nope") + ": no such file"},
		{[]string{launch.EnvNodeID, "2"}, []string{"--peers-file", peers},
			"node id 2 (from CRAWLTRACE_NODE_ID=2) is out of range for the 2 peers of --peers-file " + peers},
		{nil, []string{"--rendezvous", filepath.Join(dir, "r")}, "needs the number of nodes: --rendezvous-nodes N"},
		{nil, []string{"--rendezvous", filepath.Join(dir, "r"), "--peers-file", peers}, "both give the peers"},
		{nil, []string{"--rendezvous", filepath.Join(dir, "r"), "--rendezvous-nodes", "2", "--listen", "127.0.0.1:0", "--crawl-id", "c", "--token", "t"},
			"a rendezvous needs host:port with a fixed port"},
		{nil, []string{"--peers-file", peers}, "crawl: the nodes need a shared token: --token-file FILE, $CRAWLTRACE_TOKEN or --token"},
		{nil, []string{"--rendezvous", filepath.Join(dir, "r"), "--rendezvous-nodes", "2", "--listen", "127.0.0.1:7400", "--crawl-id", "c"},
			"the nodes need a shared token"},
	} {
		for i := 0; i+1 < len(tc.env); i += 2 {
			t.Setenv(tc.env[i], tc.env[i+1])
		}
		args := append([]string{"crawl", "-o", out, "--seeds", peers}, tc.args...)
		code, _, stderr := runCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and one line with %q", tc.env, tc.args, code, stderr, tc.want)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("%v: stderr shows a token: %q", tc.args, stderr)
		}
		for i := 0; i+1 < len(tc.env); i += 2 {
			t.Setenv(tc.env[i], "")
		}
	}
	for _, d := range []string{out, filepath.Join(dir, "r")} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s made by a refused launch", d)
		}
	}
}

// A crawl launched as srun launches it: every node given the same command
// line, its node id from SLURM_PROCID, its peers from a rendezvous
// directory, the crawl id from SLURM_JOB_ID, and the token from a file,
// the environment or the flag. It fetches every page a one-process crawl
// fetches, each once. (.ci/slurm runs docs/cluster/crawl.sbatch on a real
// Slurm.)
func TestLaunchLikeSrun(t *testing.T) {
	childProcesses(t, "runs crawls in child processes")
	web := startClusterWeb(t, 12, 30)
	want := controlPages(t, web)
	base := t.TempDir()
	dir, rdv := filepath.Join(base, "crawl"), filepath.Join(base, "rendezvous")
	tokenFile := filepath.Join(base, "token")
	os.WriteFile(tokenFile, []byte("launch-token\n"), 0o600)
	addrs := freePorts(t, 3)
	// srun starts the nodes of job 4242; resume starts them again, in
	// another job.
	srun := func(job string, more ...string) []*proc {
		procs := make([]*proc, 3)
		for i := range procs {
			env := []string{"SLURM_JOB_ID=" + job, fmt.Sprintf("SLURM_PROCID=%d", i), "SLURM_STEP_NUM_TASKS=3"}
			args := []string{"crawl", "-o", dir, "--rendezvous", rdv, "--listen", addrs[i], "--resolve", "*:" + web.addr,
				"--allow-private", "--seeds", web.seeds, "--min-delay", "0", "--delay-factor", "0", "--workers", "4", "--max-retry-after", retryCap}
			switch i {
			case 0:
				args = append(args, "--token-file", tokenFile)
			case 1:
				env = append(env, "CRAWLTRACE_TOKEN=launch-token")
			case 2:
				args = append(args, "--token", "launch-token")
			}
			procs[i] = startProcEnv(t, filepath.Join(base, fmt.Sprintf("node-%d-%s.log", i, job)), env, append(args, more...)...)
		}
		return procs
	}
	procs := srun("4242")
	got := map[string]int{}
	for i, p := range procs {
		if err := p.wait(t, fmt.Sprintf("node %d", i), 90*time.Second); err != nil {
			b, _ := os.ReadFile(p.log)
			t.Fatalf("node %d: %v\n%s", i, err, tail(string(b), 3000))
		}
		b, _ := os.ReadFile(p.log)
		line := fmt.Sprintf("crawl: node %d of 3 (node id: SLURM_PROCID=%d; peers: --rendezvous %s; crawl id slurm-4242: SLURM_JOB_ID=4242); listening on %s", i, i, rdv, addrs[i])
		if !strings.Contains(string(b), line) {
			t.Errorf("node %d's log lacks %q:\n%s", i, line, tail(string(b), 2000))
		}
		if s := readStats(t, dir, i); s.CrawlID != "slurm-4242" {
			t.Errorf("node %d: crawl id %q", i, s.CrawlID)
		}
		// A 429 or 503 answer is tried again after the server's
		// Retry-After: it is not a fetch that counts twice.
		eachPage(t, dir, i, func(r tracefile.PageRecord) {
			if r.Status == 429 || r.Status == 503 {
				got[r.URL] += 0
			} else {
				got[r.URL]++
			}
		})
	}
	for u, n := range got {
		if !want[u] {
			t.Errorf("fetched %s, which the one-process crawl did not", u)
		}
		if n > 1 {
			t.Errorf("fetched %s %d times", u, n)
		}
	}
	for u := range want {
		if _, ok := got[u]; !ok {
			t.Errorf("never fetched %s", u)
		}
	}
	t.Logf("%d pages, as the one-process crawl", len(got))

	// Resumed in another job: each node finds its saved state by its rank,
	// keeps the crawl id, meets its peers at the same addresses (the
	// topology a resume may not change), and has nothing left to do.
	for i, p := range srun("4300", "--resume") {
		err := p.wait(t, fmt.Sprintf("resumed node %d", i), 60*time.Second)
		b, _ := os.ReadFile(p.log)
		if err != nil || !strings.Contains(string(b), "nothing to do") || !strings.Contains(string(b), "crawl id slurm-4242: saved") {
			t.Errorf("resumed node %d: %v\n%s", i, err, tail(string(b), 2000))
		}
	}
}
