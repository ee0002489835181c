package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// checkCommandLine parses a crawltrace command line with the real command
// tree: the subcommand must exist and every flag must be one it defines,
// with a valid value. It returns the values of the flags given, by name,
// and the command's path under "command".
func checkCommandLine(t *testing.T, where, line string) map[string]string {
	t.Helper()
	fields := strings.Fields(strings.NewReplacer(`"`, "", `'`, "").Replace(line))
	if len(fields) == 0 || fields[0] != "crawltrace" {
		t.Fatalf("%s: %q is not a crawltrace command", where, line)
	}
	root := newRootCmd()
	cmd, rest, err := root.Find(fields[1:])
	if err != nil || cmd == root {
		t.Fatalf("%s: %q: no such command (%v)", where, line, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: %q: %v", where, line, err)
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			t.Errorf("%s: %q: %v", where, line, err)
		}
	}
	vals := map[string]string{"command": cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) { vals[f.Name] = f.Value.String() })
	return vals
}

// The Kubernetes Jobs in docs/cluster (*-job.yaml) are valid YAML, Indexed Jobs
// whose pods run a crawltrace command line that parses with the commands'
// real flags, and whose --shard/--task count is the Job's completions.
func TestClusterManifestsMatchFlags(t *testing.T) {
	paths, _ := filepath.Glob("../../docs/cluster/*-job.yaml")
	if len(paths) < 3 {
		t.Fatalf("want the condense map, condense reduce and replay Jobs, found %v", paths)
	}
	var commands []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var job struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Spec       struct {
				CompletionMode string `yaml:"completionMode"`
				Completions    int    `yaml:"completions"`
				Parallelism    int    `yaml:"parallelism"`
				Template       struct {
					Spec struct {
						RestartPolicy string `yaml:"restartPolicy"`
						Containers    []struct {
							Command []string `yaml:"command"`
							Args    []string `yaml:"args"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(false)
		if err := dec.Decode(&job); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions < 1 {
			t.Errorf("%s: not an Indexed batch/v1 Job: %+v", p, job)
		}
		if job.Spec.Template.Spec.RestartPolicy != "Never" {
			t.Errorf("%s: restartPolicy %q, want Never (retries use backoffLimitPerIndex)", p, job.Spec.Template.Spec.RestartPolicy)
		}
		cs := job.Spec.Template.Spec.Containers
		if len(cs) != 1 || len(cs[0].Args) != 1 {
			t.Fatalf("%s: want one container with one shell command in args", p)
		}
		line := regexp.MustCompile(`\$\{?JOB_COMPLETION_INDEX\}?`).ReplaceAllString(strings.TrimPrefix(strings.TrimSpace(cs[0].Args[0]), "exec "), "0")
		vals := checkCommandLine(t, p, line)
		commands = append(commands, vals["command"])
		idx := vals["shard"] + vals["task"]
		if want := "0/" + strconv.Itoa(job.Spec.Completions); idx != want {
			t.Errorf("%s: task index %q, want %q (completions)", p, idx, want)
		}
	}
	for _, want := range []string{"crawltrace condense", "crawltrace condense reduce", "crawltrace replay"} {
		found := false
		for _, c := range commands {
			found = found || c == want
		}
		if !found {
			t.Errorf("no Job runs %q", want)
		}
	}
}

// The crawltrace command lines of the Slurm scripts parse with the real
// flags (the scripts themselves run under .ci/slurm).
func TestClusterSbatchMatchFlags(t *testing.T) {
	paths, _ := filepath.Glob("../../docs/cluster/*.sbatch")
	if len(paths) < 2 {
		t.Fatalf("want condense.sbatch and replay.sbatch, found %v", paths)
	}
	vars := strings.NewReplacer("$I/$N", "0/4", "${SLURM_ARRAY_TASK_ID}/${tasks}", "0/4", `"$@"`, "", "$@", "")
	n := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			i := strings.Index(line, "crawltrace ")
			if i < 0 {
				continue
			}
			line = line[i:]
			if j := strings.Index(line, " ;;"); j >= 0 {
				line = line[:j]
			}
			line = vars.Replace(line)
			line = regexp.MustCompile(`"?\$(\{[^}]*\}|[A-Za-z_]+)"?`).ReplaceAllString(line, "x")
			line = strings.ReplaceAll(line, "--memory x", "--memory 1GiB")
			line = strings.ReplaceAll(line, "--workers x", "--workers 2")
			checkCommandLine(t, p, line)
			n++
		}
	}
	if n < 3 {
		t.Errorf("found only %d crawltrace lines in the sbatch scripts", n)
	}
}
