package frontier

import (
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
)

// Constants of Cao, Jiang and Singh's performance estimate of a server.
const (
	// EstimateAlpha smooths the per-server estimates: after each
	// connection, new = EstimateAlpha*old + (1-EstimateAlpha)*measured, so
	// an estimate keeps 80% of its history and takes 20% of each new
	// observation. The first observation is taken as it is.
	EstimateAlpha = 0.8
	// DefaultRequestsPerConn is the requests-per-connection estimate of a
	// server that has never closed a connection on the crawler.
	DefaultRequestsPerConn = 50
	// ResponseSlack is the paper's p: the time of P pages on one
	// persistent connection is estimated as P x response time x p.
	ResponseSlack = 1.2
)

// connSample is what one connection session to a server measured: the
// dials it made, the time of the first request on each new connection
// (from the connection being ready to the end of the body) and of the
// requests on reused connections, and whether the server closed the
// connection after served requests. It is built by one worker at a time.
type connSample struct {
	dials, firsts, reused int
	dialSum               time.Duration // ConnectStart to ConnectDone
	firstSum, reusedSum   time.Duration // GotConn to end of body
	served                int           // requests on the current connection
	closed                bool          // the server closed it (Connection: close)
}

// observe adds one request to s. It reports whether the session should
// end because the connection is gone: the server announced it closes it,
// or the request had to open a new connection in the middle of the
// session (the server closed the old one without saying, often an idle
// timeout during a politeness delay). Ending there keeps a session to one
// connection, so sessions do not hold connection slots forever.
func (s *connSample) observe(r *fetch.Conn) (end bool) {
	if !r.GotConn {
		return false
	}
	if r.Reused {
		s.reused++
		s.reusedSum += r.Took
		s.served++
	} else {
		end = s.firsts+s.reused > 0
		if r.Dialed {
			s.dials++
			s.dialSum += r.Dial
		}
		s.firsts++
		s.firstSum += r.Took
		s.served = 1
	}
	if r.Closed {
		s.closed = true
		end = true
	}
	return end
}

// serverEstimate is a server's smoothed connection time, response time
// (seconds) and requests per connection. The zero value knows nothing.
// It is not safe for concurrent use.
type serverEstimate struct {
	conn, resp, rpc    float64
	connN, respN, rpcN int // observations taken (0: unknown)
}

func smooth(old, measured float64, n int) float64 {
	if n == 0 {
		return measured
	}
	return EstimateAlpha*old + (1-EstimateAlpha)*measured
}

// update folds one connection session into e. The measured response time
// is the mean time of the requests on reused connections, or, when there
// were none (a server that allows one request per connection), of the
// first requests. The measured connection time is the mean dial time
// (httptrace ConnectStart to ConnectDone) plus, when both kinds of request
// were seen, how much longer a connection's first request took than a
// reused one: set-up work a server does per connection shows up there,
// not in the TCP handshake. A server that closed the connection after k
// requests gives a requests-per-connection sample k; one that was still
// serving after k requests (the crawler ran out of URLs) raises the
// estimate to k when k is larger.
func (e *serverEstimate) update(s *connSample) {
	var resp float64
	haveResp := true
	switch {
	case s.reused > 0:
		resp = (s.reusedSum / time.Duration(s.reused)).Seconds()
	case s.firsts > 0:
		resp = (s.firstSum / time.Duration(s.firsts)).Seconds()
	default:
		haveResp = false
	}
	if s.firsts > 0 || s.dials > 0 {
		var c float64
		if s.dials > 0 {
			c = (s.dialSum / time.Duration(s.dials)).Seconds()
		}
		if s.reused > 0 && s.firsts > 0 {
			c += max(0, (s.firstSum/time.Duration(s.firsts)).Seconds()-resp)
		}
		e.conn = smooth(e.conn, c, e.connN)
		e.connN++
	}
	if haveResp {
		e.resp = smooth(e.resp, resp, e.respN)
		e.respN++
	}
	switch {
	case s.closed && s.served > 0:
		e.rpc = smooth(e.rpc, float64(s.served), e.rpcN)
		e.rpcN++
	case !s.closed && float64(s.served) > e.requestsPerConn():
		e.rpc = float64(s.served)
		e.rpcN++
	}
}

// requestsPerConn is the estimate, DefaultRequestsPerConn when unknown.
func (e *serverEstimate) requestsPerConn() float64 {
	if e.rpcN == 0 {
		return DefaultRequestsPerConn
	}
	return e.rpc
}

// pages is P = min(requests-per-connection estimate, queued URLs).
func (e *serverEstimate) pages(queued int) float64 {
	return min(e.requestsPerConn(), float64(queued))
}

// expectedTime is T = 2 x connection time + P x response time x
// ResponseSlack, in seconds. Unknown times are taken from def (the mean
// over the servers this node has measured).
func (e *serverEstimate) expectedTime(p float64, def *serverEstimate) float64 {
	c, r := e.conn, e.resp
	if e.connN == 0 {
		c = def.conn
	}
	if e.respN == 0 {
		r = def.resp
	}
	return 2*c + p*r*ResponseSlack
}

// newDefaultEstimate starts the estimate used for servers never measured:
// the frontier smooths every connection of the node into it; before the
// first, connection and response time are 1ms each.
func newDefaultEstimate() serverEstimate {
	return serverEstimate{conn: 0.001, resp: 0.001}
}
