package launch_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/recorder/launch"
)

// Task 2 of an srun of 4 tasks in job 4242, every task given the same
// flags: its node id is its rank, its crawl id the job's, and its peers
// are found at the rendezvous.
func ExampleResolve() {
	env := map[string]string{"SLURM_PROCID": "2", "SLURM_STEP_NUM_TASKS": "4", "SLURM_JOB_ID": "4242", "CRAWLTRACE_TOKEN": "t"}
	ln, err := launch.Resolve(launch.Input{Rendezvous: "/shared/crawl.rendezvous"}, launch.Env{
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("node %d (%s) of %d at %s, crawl %s (%s), token from %s\n",
		ln.NodeID, ln.NodeIDFrom, ln.RendezvousNodes, ln.Rendezvous, ln.CrawlID, ln.CrawlIDFrom, ln.TokenFrom)

	// The same task given --node-id 0 on the shared command line.
	_, err = launch.Resolve(launch.Input{Rendezvous: "/shared/crawl.rendezvous", NodeIDSet: true}, launch.Env{
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	fmt.Println(err)
	// Output:
	// node 2 (SLURM_PROCID=2) of 4 at /shared/crawl.rendezvous, crawl slurm-4242 (SLURM_JOB_ID=4242), token from CRAWLTRACE_TOKEN
	// launch: --node-id 0 differs from SLURM_PROCID=2, this task's rank in a job step of 4 tasks: every task of the step is given the same command line, so leave the node id to the rank
}
