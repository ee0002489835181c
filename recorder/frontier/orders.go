package frontier

// Crawl orders: how the server queue and each server's URL queue are
// served (two-level scheduling after Cao, Jiang and Singh). The recorder's
// Config.Order takes the same names.
const (
	OrderBFS    = "bfs"    // servers FIFO, URLs FIFO per server
	OrderDFS    = "dfs"    // servers FIFO, URLs LIFO per server
	OrderRandom = "random" // servers FIFO, uniformly random queued URL, seeded
	// OrderPerformance ranks servers by P/T (pages expected per connection
	// over their expected time); URLs FIFO.
	OrderPerformance = "performance"
	// OrderQuality serves URLs best quality first and ranks servers by
	// their best queued URL. Needs a quality oracle.
	OrderQuality = "quality"
	// OrderCapability ranks servers by the summed quality of their next P
	// URLs divided by T; URLs best quality first. Needs a quality oracle.
	OrderCapability = "capability"
)
