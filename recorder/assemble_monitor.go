package recorder

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/crawltrace/crawltrace/internal/procmem"
	"github.com/crawltrace/crawltrace/recorder/monitor"
)

// startMonitor serves crawl c's metrics and status page on ln
// (Config.Metrics): the live stats are those stats.json is written from,
// taken at each scrape.
func startMonitor(cfg *Config, c *crawl, nodes []*node, l link, ln net.Listener, start time.Time) (*monitor.Server, error) {
	labels := map[string]string{"crawl_id": cfg.CrawlID}
	title := fmt.Sprintf("crawltrace: crawl %s", cfg.CrawlID)
	if c.tcp {
		labels["node"] = strconv.Itoa(cfg.NodeID)
		title += fmt.Sprintf(", node %d of %d", cfg.NodeID, len(cfg.Peers))
	} else {
		title += fmt.Sprintf(", %d nodes in one process", len(nodes))
	}
	return monitor.Start(monitor.Options{Listener: ln, Labels: labels, Title: title,
		Stats: func() any {
			s := c.collect(nodes, time.Since(start), l.peerStats, true)
			s.PeakRSSBytes = procmem.PeakRSS()
			return s
		}})
}
