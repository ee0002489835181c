package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/launch"
)

// Every Kubernetes manifest in docs/cluster is checked by a test: the
// Jobs by TestClusterManifestsMatchFlags, the crawl's StatefulSet by
// TestCrawlStatefulSetMatchesFlags.
func TestClusterManifestsAllChecked(t *testing.T) {
	paths, _ := filepath.Glob("../../docs/cluster/*.yaml")
	for _, p := range paths {
		if b := filepath.Base(p); !strings.HasSuffix(b, "-job.yaml") && b != "crawl-statefulset.yaml" {
			t.Errorf("%s: no test checks it against the flags", p)
		}
	}
}

// k8sObject is the part of a Kubernetes object the test reads.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		// Service; Selector is a map of labels in a Service, and
		// {matchLabels: ...} in a StatefulSet.
		ClusterIP                string         `yaml:"clusterIP"`
		PublishNotReadyAddresses bool           `yaml:"publishNotReadyAddresses"`
		Selector                 map[string]any `yaml:"selector"`
		Ports                    []struct {
			Port int `yaml:"port"`
		} `yaml:"ports"`
		// StatefulSet
		ServiceName         string `yaml:"serviceName"`
		Replicas            int    `yaml:"replicas"`
		PodManagementPolicy string `yaml:"podManagementPolicy"`
		Template            struct {
			Metadata struct {
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				Containers []struct {
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name string `yaml:"name"`
					} `yaml:"env"`
					Ports []struct {
						ContainerPort int `yaml:"containerPort"`
					} `yaml:"ports"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap *struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
					PVC *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// readK8sObjects reads the documents of a multi-document manifest, by kind.
func readK8sObjects(t *testing.T, p string) map[string]k8sObject {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs := map[string]k8sObject{}
	dec := yaml.NewDecoder(f)
	for {
		var o k8sObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, dup := objs[o.Kind]; dup {
			t.Fatalf("%s: two %s objects", p, o.Kind)
		}
		objs[o.Kind] = o
	}
	return objs
}

// The crawl's StatefulSet in docs/cluster is a headless Service, a
// ConfigMap and a StatefulSet that fit together: each pod runs one
// crawltrace command line that parses with the crawl's real flags and
// gives neither a node id nor a token on it; the node id that
// recorder/launch takes from pod crawl-i's host name is i; the peers file
// it mounts lists pod i's stable name under the Service, with the port
// the node listens on, for as many pods as replicas; the token comes from
// a mounted Secret.
func TestCrawlStatefulSetMatchesFlags(t *testing.T) {
	const p = "../../docs/cluster/crawl-statefulset.yaml"
	objs := readK8sObjects(t, p)
	svc, cm, sts := objs["Service"], objs["ConfigMap"], objs["StatefulSet"]
	if svc.APIVersion != "v1" || cm.APIVersion != "v1" || sts.APIVersion != "apps/v1" {
		t.Fatalf("%s: want a v1 Service, a v1 ConfigMap and an apps/v1 StatefulSet, found %v", p, slices.Collect(maps.Keys(objs)))
	}
	spec := sts.Spec
	if svc.Spec.ClusterIP != "None" || svc.Metadata.Name != spec.ServiceName {
		t.Errorf("%s: the Service %q (clusterIP %q) is not the StatefulSet's headless service %q", p, svc.Metadata.Name, svc.Spec.ClusterIP, spec.ServiceName)
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("%s: the Service does not publish pods before they are Ready: a node could not resolve a peer's name while it starts", p)
	}
	labels := spec.Template.Metadata.Labels
	match, _ := spec.Selector["matchLabels"].(map[string]any)
	for who, sel := range map[string]map[string]any{"the Service": svc.Spec.Selector, "the StatefulSet": match} {
		if len(sel) == 0 {
			t.Errorf("%s: %s selects no labels", p, who)
		}
		for k, v := range sel {
			if labels[k] != v {
				t.Errorf("%s: %s selects %s=%v, the pods are labeled %v", p, who, k, v, labels)
			}
		}
	}
	if spec.PodManagementPolicy != "Parallel" {
		t.Errorf("%s: podManagementPolicy %q, want Parallel (the nodes wait for each other)", p, spec.PodManagementPolicy)
	}
	n := spec.Replicas
	if n < 2 {
		t.Fatalf("%s: %d replicas", p, n)
	}
	cs := spec.Template.Spec.Containers
	if len(cs) != 1 || len(cs[0].Args) != 1 || len(cs[0].Ports) != 2 {
		t.Fatalf("%s: want one container with one shell script in args and two ports (peer, metrics)", p)
	}
	c := cs[0]
	var line string
	for _, l := range strings.Split(c.Args[0], "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "crawltrace ") {
			line = l
		}
	}
	vals := checkCommandLine(t, p, strings.ReplaceAll(line, "$resume", ""))
	if vals["command"] != "crawltrace crawl" {
		t.Fatalf("%s: runs %q, want crawltrace crawl", p, vals["command"])
	}
	for _, f := range []string{"node-id", "token", "peers", "rendezvous"} {
		if _, ok := vals[f]; ok {
			t.Errorf("%s: --%s on the command line (the node id comes from the pod's ordinal, the token from the Secret, the peers from the file)", p, f)
		}
	}
	for _, f := range []string{"out", "peers-file", "token-file", "listen", "crawl-id"} {
		if vals[f] == "" {
			t.Errorf("%s: no --%s", p, f)
		}
	}
	// The script resumes a node whose state the volume holds.
	if want := vals["out"] + `/$node/state/config.json`; !strings.Contains(c.Args[0], want) || !strings.Contains(c.Args[0], "resume=--resume") {
		t.Errorf("%s: the script does not resume a node whose %s exists", p, want)
	}
	_, port, err := net.SplitHostPort(vals["listen"])
	if err != nil || port != strconv.Itoa(c.Ports[0].ContainerPort) || len(svc.Spec.Ports) != 1 || port != strconv.Itoa(svc.Spec.Ports[0].Port) {
		t.Errorf("%s: --listen %s, container port %d, Service ports %v: want one port", p, vals["listen"], c.Ports[0].ContainerPort, svc.Spec.Ports)
	}
	// The metrics on the second container port (docs/monitoring.md), and
	// the annotations a pod-discovering Prometheus reads name it.
	if _, mport, err := net.SplitHostPort(vals["metrics"]); err != nil || mport != strconv.Itoa(c.Ports[1].ContainerPort) ||
		spec.Template.Metadata.Annotations["prometheus.io/port"] != mport {
		t.Errorf("%s: --metrics %q, container port %d, annotations %v: want the metrics port named by all three", p, vals["metrics"], c.Ports[1].ContainerPort, spec.Template.Metadata.Annotations)
	}

	// mounted returns the volume mounted at file's directory.
	mounted := func(file string) (name string, ok bool) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == path.Dir(file) {
				for _, v := range spec.Template.Spec.Volumes {
					if v.Name == m.Name {
						switch {
						case v.ConfigMap != nil:
							return "configmap/" + v.ConfigMap.Name, true
						case v.Secret != nil:
							return "secret/" + v.Secret.SecretName, true
						}
					}
				}
			}
		}
		return "", false
	}
	if v, ok := mounted(vals["token-file"]); !ok || !strings.HasPrefix(v, "secret/") {
		t.Errorf("%s: --token-file %s is not in a mounted Secret (%q)", p, vals["token-file"], v)
	}
	for _, f := range []string{vals["peers-file"], vals["seeds"]} {
		if v, ok := mounted(f); !ok || v != "configmap/"+cm.Metadata.Name || cm.Data[path.Base(f)] == "" {
			t.Errorf("%s: %s is not a key of the ConfigMap %s mounted at %s (%q)", p, f, cm.Metadata.Name, path.Dir(f), v)
		}
	}

	// The peers file, read as the node reads it: pod i's stable name.
	peersFile := filepath.Join(t.TempDir(), "peers")
	os.WriteFile(peersFile, []byte(cm.Data[path.Base(vals["peers-file"])]), 0o644)
	peers, err := launch.ReadPeersFile(peersFile)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if len(peers) != n {
		t.Errorf("%s: %d peers for %d replicas", p, len(peers), n)
	}
	for i, peer := range peers {
		if want := fmt.Sprintf("%s-%d.%s:%s", sts.Metadata.Name, i, svc.Metadata.Name, port); peer != want {
			t.Errorf("%s: peer %d is %s, want pod %d's stable name %s", p, i, peer, i, want)
		}
	}
	// The node id of pod NAME-i, as the node resolves it.
	podEnv := func(host string) launch.Env {
		return launch.Env{
			Lookup: func(k string) (string, bool) {
				if k == launch.EnvKubernetes {
					return "10.96.0.1", true
				}
				return "", false
			},
			Hostname: func() (string, error) { return host, nil },
		}
	}
	for i := range n {
		pod := fmt.Sprintf("%s-%d", sts.Metadata.Name, i)
		ln, err := launch.Resolve(launch.Input{PeersFile: peersFile, TokenFile: crawltest.WriteFile(t, t.TempDir(), "token", "s\n")}, podEnv(pod))
		if err != nil || ln.NodeID != i || ln.Peers[i] != peers[i] {
			t.Errorf("pod %s: node %d (%v), peer %v; want node %d", pod, ln.NodeID, err, ln.Peers, i)
		}
	}
	if _, err := launch.Resolve(launch.Input{PeersFile: peersFile}, podEnv(fmt.Sprintf("%s-%d", sts.Metadata.Name, n))); err == nil {
		t.Errorf("pod %s-%d, beyond the peers file, was given a node id", sts.Metadata.Name, n)
	}
}

// docs/cluster/crawl.sbatch gives every task one crawltrace command line
// that parses with the crawl's flags and leaves the node id, the peers and
// the token to what srun sets (.ci/slurm runs it on a real Slurm).
func TestCrawlSbatchMatchesFlags(t *testing.T) {
	const p = "../../docs/cluster/crawl.sbatch"
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, "crawltrace crawl "); i >= 0 && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			line = l[i:]
		}
	}
	line = strings.NewReplacer(`"$@"`, "", `"$0"`, "/shared/crawl", `"$CRAWL_RENDEZVOUS"`, "/shared/crawl.rendezvous",
		`"$CRAWL_HOST:$port"`, ":7400").Replace(line)
	vals := checkCommandLine(t, p, line)
	for _, f := range []string{"node-id", "token", "peers", "peers-file", "crawl-id"} {
		if _, ok := vals[f]; ok {
			t.Errorf("%s: --%s on the command line: it comes from srun", p, f)
		}
	}
	if vals["rendezvous"] == "" || vals["listen"] != ":7400" || vals["out"] != "/shared/crawl" {
		t.Errorf("%s: %q parses to %v, want -o, --rendezvous and --listen", p, line, vals)
	}
	if !strings.Contains(string(b), "export CRAWLTRACE_TOKEN") || !strings.Contains(string(b), "SLURM_LOCALID") {
		t.Errorf("%s: the token is not exported to the tasks, or the port is not the task's own", p)
	}
}
