package frontier

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

const ms = time.Millisecond

// TestConnSampleObserve: a dialled first request, two reused ones and a
// Connection: close give one dial, one first request, two reused, three
// served on the connection, closed by the server.
func TestConnSampleObserve(t *testing.T) {
	var s connSample
	ends := []bool{
		s.observe(&fetch.Conn{GotConn: true, Dialed: true, Dial: 2 * ms, Took: 30 * ms}),
		s.observe(&fetch.Conn{GotConn: true, Reused: true, Took: 10 * ms}),
		s.observe(&fetch.Conn{GotConn: true, Reused: true, Took: 14 * ms, Closed: true}),
		s.observe(&fetch.Conn{}), // no connection (a refused dial): ignored
	}
	if !slices.Equal(ends, []bool{false, false, true, false}) {
		t.Errorf("session ends %v, want only after Connection: close", ends)
	}
	want := connSample{dials: 1, firsts: 1, reused: 2, dialSum: 2 * ms, firstSum: 30 * ms, reusedSum: 24 * ms, served: 3, closed: true}
	if s != want {
		t.Errorf("sample %+v, want %+v", s, want)
	}
	// A new connection in the middle of a session restarts the count and
	// ends the session.
	if !s.observe(&fetch.Conn{GotConn: true, Took: 5 * ms}) {
		t.Error("a new connection mid-session does not end it")
	}
	if s.served != 1 || s.firsts != 2 || s.dials != 1 {
		t.Errorf("after a new undialled connection: %+v", s)
	}
}

// TestEstimateArithmetic checks the smoothing (new = 0.8 old + 0.2
// measured, the first measure taken as is), P and T on hand-computed
// values.
func TestEstimateArithmetic(t *testing.T) {
	var e serverEstimate
	def := serverEstimate{conn: 0.001, resp: 0.001}
	// Unknown server: P = min(50, queued); T from the default.
	if p := e.pages(100); p != 50 {
		t.Errorf("P(new server, 100 queued) = %v, want 50", p)
	}
	if p := e.pages(7); p != 7 {
		t.Errorf("P(new server, 7 queued) = %v, want 7", p)
	}
	if tt := e.expectedTime(7, &def); !near(tt, 2*0.001+7*0.001*1.2) {
		t.Errorf("T(new server, P=7) = %v, want 0.0104", tt)
	}

	// Session 1: dial 2ms, first request 30ms, reused 10ms and 14ms,
	// closed after 3. resp = 12ms; conn = 2ms + (30-12)ms = 20ms; rpc 3.
	e.update(&connSample{dials: 1, firsts: 1, reused: 2, dialSum: 2 * ms, firstSum: 30 * ms, reusedSum: 24 * ms, served: 3, closed: true})
	if !near(e.resp, 0.012) || !near(e.conn, 0.020) || e.rpc != 3 {
		t.Fatalf("after session 1: %+v, want resp 0.012 conn 0.020 rpc 3", e)
	}
	// Session 2: dial 4ms, first 20ms, reused 10ms, closed after 2.
	// resp = 0.8*0.012 + 0.2*0.010 = 0.0116
	// conn = 0.8*0.020 + 0.2*(0.004+0.010) = 0.0188
	// rpc  = 0.8*3 + 0.2*2 = 2.8
	e.update(&connSample{dials: 1, firsts: 1, reused: 1, dialSum: 4 * ms, firstSum: 20 * ms, reusedSum: 10 * ms, served: 2, closed: true})
	if !near(e.resp, 0.0116) || !near(e.conn, 0.0188) || !near(e.rpc, 2.8) {
		t.Fatalf("after session 2: %+v, want resp 0.0116 conn 0.0188 rpc 2.8", e)
	}
	// P = min(2.8, 10) = 2.8; T = 2*0.0188 + 2.8*0.0116*1.2 = 0.076576.
	if p := e.pages(10); !near(p, 2.8) {
		t.Errorf("P = %v, want 2.8", p)
	}
	if p := e.pages(1); p != 1 {
		t.Errorf("P(1 queued) = %v, want 1", p)
	}
	if tt := e.expectedTime(2.8, &def); !near(tt, 0.076576) {
		t.Errorf("T = %v, want 0.076576", tt)
	}
}

func TestEstimateOneRequestPerConnection(t *testing.T) {
	// Only first requests (the server closes after each): their mean is
	// the response time, the dial the connection time, rpc 1.
	var e serverEstimate
	e.update(&connSample{dials: 1, firsts: 1, dialSum: 1 * ms, firstSum: 25 * ms, served: 1, closed: true})
	if !near(e.resp, 0.025) || !near(e.conn, 0.001) || e.rpc != 1 || e.requestsPerConn() != 1 {
		t.Errorf("%+v, want resp 0.025 conn 0.001 rpc 1", e)
	}
}

func TestEstimateOpenConnection(t *testing.T) {
	// The crawler ran out of URLs before the server Closed: 10 served
	// says nothing below the default 50; 60 raises the estimate to 60.
	var e serverEstimate
	e.update(&connSample{firsts: 1, reused: 9, firstSum: 10 * ms, reusedSum: 90 * ms, served: 10})
	if e.requestsPerConn() != DefaultRequestsPerConn {
		t.Errorf("rpc %v after 10 served on an open connection, want %d", e.requestsPerConn(), DefaultRequestsPerConn)
	}
	// No dial was traced, so the connection time is only the first
	// request's excess over the mean reused one: 10ms - 10ms = 0.
	if !near(e.conn, 0) || !near(e.resp, 0.010) {
		t.Errorf("%+v, want conn 0 resp 0.010", e)
	}
	e.update(&connSample{reused: 60, reusedSum: 600 * ms, served: 60})
	if e.requestsPerConn() != 60 {
		t.Errorf("rpc %v after 60 served on an open connection, want 60", e.requestsPerConn())
	}
}
