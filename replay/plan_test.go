package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// The plans of the N tasks of a sweep split its grid: each unit of a grid
// listed here independently (trace x policy x size, one unit for a
// one-pass policy) is in exactly one task's plan, task i holding units
// i, i+N, ...; and the requests the tasks' plans count for their passes
// (one per seed for a randomized policy run per size) add up to the
// sweep's.
func TestPlanTasksSplitGrid(t *testing.T) {
	dir := t.TempDir()
	reqs := []int64{3000, 5000}
	var traces []string
	for i, n := range reqs {
		traces = append(traces, genTrace(t, dir, fmt.Sprintf("t%d.arrow", i), GenConfig{Requests: n, Keys: 500, Alpha: 0.8, Locality: 0.3, Window: 8, Seed: uint64(i + 1)}))
	}
	for _, c := range []struct {
		sizes   []int
		onePass []string // the policies computed in one unit
	}{
		{[]int{1, 16, 256}, []string{"infinite"}},
		{[]int{1, 2, 4, 8, 16}, []string{"infinite", "lru", "min"}},
	} {
		policies := []string{"lru", "MIN", "clock", "random", "infinite", "lru"}
		type cell struct {
			trace  int
			policy string
			size   int
		}
		var want []cell
		var wantTotal int64
		for ti := range traces {
			for _, p := range []string{"lru", "min", "clock", "random", "infinite"} {
				if slices.Contains(c.onePass, p) {
					want = append(want, cell{ti, p, 0})
					wantTotal += reqs[ti]
					continue
				}
				for _, s := range c.sizes {
					want = append(want, cell{ti, p, s})
					wantTotal += reqs[ti]
					if p == "random" {
						wantTotal += 2 * reqs[ti] // 3 seeds
					}
				}
			}
		}
		for tasks := 1; tasks <= 4; tasks++ {
			got := make([]cell, len(want))
			var total int64
			for task := range tasks {
				cfg := Config{Traces: traces, Policies: policies, Sizes: c.sizes, Seeds: 3, Task: task, Tasks: tasks, Memory: -1}
				p, err := newPlan(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				j := task
				for _, u := range p.units {
					if j >= len(want) || (got[j] != cell{}) {
						t.Fatalf("sizes %v, task %d of %d: unit %v past the grid or twice", c.sizes, task, tasks, u)
					}
					got[j] = cell{u.trace, u.policy, u.size}
					j += tasks
				}
				if j < len(want) {
					t.Errorf("sizes %v, task %d of %d: %d units, want more", c.sizes, task, tasks, len(p.units))
				}
				total += p.total
			}
			if !slices.Equal(got, want) {
				t.Errorf("sizes %v, %d tasks: units\n%v\nwant\n%v", c.sizes, tasks, got, want)
			}
			if total != wantTotal {
				t.Errorf("sizes %v, %d tasks: %d requests to replay, want %d", c.sizes, tasks, total, wantTotal)
			}
		}
	}
}
