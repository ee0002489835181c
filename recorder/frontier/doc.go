// Package frontier is a crawling node's frontier: the URLs it has yet to
// fetch, in Cao, Jiang and Singh's two-level schedule (a queue of
// servers, and one queue of URLs per server, both ordered by the crawl
// order), with Mercator's politeness (one request in flight per server,
// and a delay between requests) and robots.txt in the schedule.
//
// A [Frontier] is the locked front of a single-threaded scheduler core.
// The node's host splitter calls [Frontier.Add]; each fetch worker calls
// [Frontier.Next], which holds a server ([Host]) for the worker and gives
// it a [Task] (a URL, its origin's robots.txt, or a robots.txt redirect
// hop), then releases the server with [Frontier.ReleaseFetch] or
// [Frontier.Release]. A server's requests go over one connection
// session, from the connection the frontier opens (taking one of the
// crawl's capped [ConnSlots]) until the server closes it; the session
// measures the server ([fetch.Conn], [Host.Observe]) for the performance
// and capability orders (estimator.go).
//
// robots.txt rules ([robots.Rules]) are per origin, politeness per server:
// a URL whose origin has no rules in force is parked while the worker
// fetches them ([Frontier.RobotsDone], schedule_robots.go).
//
// Server queues spill to a disk [Store] under a memory budget
// ([Frontier.SpillTo]; store.go holds the format). The frontier saves
// and restores itself as a part of a crawl checkpoint ([Frontier.Part],
// save.go), and reports its sizes and waits as a [Snapshot].
//
// The politeness key of a URL (host or address) and the delay rule belong
// to the crawl's configuration: [Options] takes them as functions.
package frontier
