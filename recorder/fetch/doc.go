// Package fetch is the recorder's HTTP client: one GET of a page or a
// robots.txt ([Get]) with its body capped after decoding (gzip, deflate,
// br), non-HTML page bodies skipped on their headers, and the facts of
// the connection it used ([Conn]) measured for the server's performance
// estimate. The client ([NewClient]) follows no redirect (the crawler
// queues the target, counting hops in [Redirects]), applies --resolve,
// and refuses to dial addresses that are not public unicast, on the
// address actually dialled ([ErrPrivateAddress]).
package fetch
