package condense

import "testing"

// Each gate leaves its filter aside for bypass rows after a window in
// which the filter dropped under its share of them (the repeat filter
// half, the recent table a quarter), then watches again, counting the
// rows it let past.
func TestWindowGates(t *testing.T) {
	type step struct {
		rows, hits int64
		used       bool // the filter used after the batch
	}
	fg, rg := &filterGate{}, &recentGate{}
	for _, tc := range []struct {
		name           string
		window, bypass *int64
		gate           interface {
			done(rows, hits int64)
			open() bool
		}
		state *windowGate
		steps []step
	}{
		{"filterGate", &gateWindow, &gateBypass, fg, &fg.windowGate, []step{
			{60, 59, true}, {60, 1, true}, // window of 120 rows, 60 hits: half, keep filtering
			{50, 10, true}, {50, 10, false}, // 100 rows, 20 hits: left aside
			{200, 0, false}, {100, 0, true}, // 300 rows unfiltered, then watch again
			{100, 51, true},  // most rows dropped: keep filtering
			{100, 30, false}, // under half (if over a quarter): left aside
		}},
		{"recentGate", &recentWindow, &recentBypass, rg, &rg.windowGate, []step{
			{50, 10, true},    // a window half seen
			{50, 14, false},   // closed: 24 of 100, under a quarter
			{100, 100, false}, // 100 of 300 rows bypassed
			{200, 0, true},    // 300: watching again
			{100, 25, true},   // a quarter: still looking
			{100, 24, false},  // under a quarter
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setForTest(t, tc.window, 100)
			setForTest(t, tc.bypass, 300)
			for i, s := range tc.steps {
				tc.gate.done(s.rows, s.hits)
				if tc.gate.open() != s.used {
					t.Fatalf("step %d: filter used %v, want %v", i, tc.gate.open(), s.used)
				}
			}
			if tc.state.bypassed != 300 {
				t.Errorf("%d rows bypassed, want 300", tc.state.bypassed)
			}
		})
	}
}
