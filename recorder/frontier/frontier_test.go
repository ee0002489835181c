package frontier

import (
	"slices"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/robots"
)

// testFrontier is a frontier of order keyed by host name.
func testFrontier(order string) *Frontier {
	return New(Options{Order: order, Seed: 1})
}

func TestFrontierOrders(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  []string
	}{
		{OrderBFS, []string{"http://a/1", "http://a/2", "http://a/3"}},
		{OrderDFS, []string{"http://a/3", "http://a/2", "http://a/1"}},
	} {
		f := testFrontier(tc.order)
		for _, u := range []string{"http://a/1", "http://a/2", "http://a/3"} {
			f.Add(u)
		}
		var got []string
		for range 3 {
			tk, _ := f.Next(t.Context())
			if tk.Robots {
				f.RobotsDone(tk.Host, tk.URL, func(*robots.Rules) *robots.Rules { return robots.New(404, "", nil, "x") })
				f.Release(tk.Host, true, 0)
				tk, _ = f.Next(t.Context())
			}
			got = append(got, tk.URL)
			f.Release(tk.Host, true, 0)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v", tc.order, got)
		}
	}
}
