package condense

// windowGate is the state machine of filterGate and recentGate: it watches
// the share of rows a filter drops over a window of rows and, when that
// share is under 1/div, has the filter left aside for the next rows, then
// watches again. The two gates differ only in their window, bypass length
// and share.
type windowGate struct {
	bypass     bool
	rows, hits int64 // in the current window, or bypass
	bypassed   int64 // rows that went past the filter, in all
}

// open reports whether the next batch goes through the filter.
func (g *windowGate) open() bool { return !g.bypass }

// watch has the filter used again and starts a new window.
func (g *windowGate) watch() { g.bypass, g.rows, g.hits = false, 0, 0 }

// passed counts rows spilled with no filter at all (the workers left the
// table after the recent-URL table found few repeats): they went past it
// as bypassed rows do.
func (g *windowGate) passed(rows int64) { g.bypassed += rows }

// count counts a batch of rows, of which hits were dropped by the filter:
// a window ends after window rows, a bypass after bypass rows.
func (g *windowGate) count(rows, hits, window, bypass, div int64) {
	g.rows += rows
	if g.bypass {
		g.bypassed += rows
		if g.rows >= bypass {
			g.watch()
		}
		return
	}
	g.hits += hits
	if g.rows >= window {
		g.bypass = div*g.hits < g.rows
		g.rows, g.hits = 0, 0
	}
}
