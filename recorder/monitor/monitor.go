// Package monitor serves a running crawl to the tools that watch it: its
// metrics in Prometheus' text format (/metrics, through
// prometheus/client_golang), its stats as JSON with the recent samples
// (/stats.json), and a status page drawing them (/), with no external
// assets.
//
// The metrics are a view of one declaration, the crawl's stats struct
// (recorder.Stats), the one stats.json is written from: every exported
// number with a JSON name (an embedded struct's included, as stats.json
// has them) is a metric named crawltrace_ and that name, a counter (with
// _total) for an int64 and a gauge for the other kinds; a map of counts
// is one metric with a label. A struct tag overrides
// either: `metric:"gauge"`, `metric:"counter,LABEL"`, or `metric:"-"`.
// Adding a field to the stats adds its metric.
//
// Once the crawl is over its final stats (the values written to
// stats.json) are served from then on, and Close waits, if anyone
// scraped the metrics during the crawl, for one more scrape, so that the
// last values a scraper holds are the final ones.
//
// A Server is safe for concurrent use.
package monitor

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "crawltrace"

// Options configure a Server.
type Options struct {
	// Addr is the address to listen on (host:port; port 0 for any), or
	// Listener a listener already open.
	Addr     string
	Listener net.Listener
	// Stats returns the crawl's stats now, a pointer to a struct; it is
	// called on every scrape and every Every.
	Stats func() any
	// Labels are added to every metric (the crawl id, the node).
	Labels map[string]string
	// Title heads the status page.
	Title string
	// Every is the interval of the samples kept for /stats.json and the
	// status page's chart (1 s when 0); Keep how many are kept (600).
	Every time.Duration
	Keep  int
}

// Sample is one point of the status page's chart.
type Sample struct {
	T      float64          `json:"t"` // seconds since the server started
	Values map[string]int64 `json:"values"`
}

// Sampled are the stats' fields kept in each Sample.
var Sampled = []string{"fetch_attempts", "urls_logged", "queued", "hosts_known", "robots_waiting",
	"batches_sent", "batches_received", "batches_refused"}

// Server serves one crawl's metrics and status page.
type Server struct {
	o      Options
	fields []field
	srv    *http.Server
	ln     net.Listener
	start  time.Time

	mu      sync.Mutex
	final   any      // the final stats, once Final was called
	samples []Sample // ring of the last o.Keep
	stop    chan struct{}
	done    chan struct{}

	scrapes     atomic.Int64 // scrapes of /metrics
	finalServed atomic.Bool  // /metrics served the final stats
}

// Start listens and serves until Close.
func Start(o Options) (*Server, error) {
	if o.Stats == nil {
		return nil, errors.New("monitor: no stats")
	}
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if o.Keep <= 0 {
		o.Keep = 600
	}
	t := reflect.TypeOf(o.Stats())
	if t == nil || t.Kind() != reflect.Pointer {
		return nil, errors.New("monitor: stats must be a pointer to a struct")
	}
	fs, err := fields(t.Elem(), o.Labels)
	if err != nil {
		return nil, err
	}
	ln := o.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", o.Addr); err != nil {
			return nil, fmt.Errorf("monitor: --metrics %s: %w", o.Addr, err)
		}
	}
	s := &Server{o: o, fields: fs, ln: ln, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	reg := prometheus.NewRegistry()
	if err := reg.Register(collector{s}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("monitor: %w", err)
	}
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		s.scrapes.Add(1)
		final := s.isFinal()
		metrics.ServeHTTP(w, r)
		if final {
			s.finalServed.Store(true)
		}
	})
	mux.HandleFunc("/stats.json", s.handleStats)
	mux.HandleFunc("/", s.handlePage)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	go s.srv.Serve(ln)
	go s.sample()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// current is the stats to serve: the final ones once given, else a new
// snapshot.
func (s *Server) current() reflect.Value {
	s.mu.Lock()
	f := s.final
	s.mu.Unlock()
	if f == nil {
		f = s.o.Stats()
	}
	v := reflect.ValueOf(f)
	if !v.IsValid() || v.IsNil() {
		return reflect.Value{}
	}
	return v.Elem()
}

func (s *Server) isFinal() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final != nil
}

// sample keeps a Sample every o.Every until Close.
func (s *Server) sample() {
	defer close(s.done)
	tick := time.NewTicker(s.o.Every)
	defer tick.Stop()
	s.take()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.take()
		}
	}
}

func (s *Server) take() {
	v := s.current()
	if !v.IsValid() {
		return
	}
	sm := Sample{T: time.Since(s.start).Seconds(), Values: map[string]int64{}}
	for _, f := range s.fields {
		for _, name := range Sampled {
			if f.name == name && f.label == "" {
				sm.Values[name] = int64(number(v.FieldByIndex(f.index)))
			}
		}
	}
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	if len(s.samples) > s.o.Keep {
		s.samples = append(s.samples[:0], s.samples[len(s.samples)-s.o.Keep:]...)
	}
	s.mu.Unlock()
}

// Final makes stats (the crawl's final stats, as written to stats.json)
// what the server serves from now on.
func (s *Server) Final(stats any) {
	s.mu.Lock()
	s.final = stats
	s.mu.Unlock()
	s.take()
}

// Close stops the server. If /metrics was scraped while the crawl ran,
// it first waits, at most linger, for a scrape of the final stats.
func (s *Server) Close(linger time.Duration) {
	if s.scrapes.Load() > 0 && s.isFinal() {
		for end := time.Now().Add(linger); !s.finalServed.Load() && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
	}
	close(s.stop)
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
}

func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	v := s.current()
	s.mu.Lock()
	samples := append([]Sample(nil), s.samples...)
	final := s.final != nil
	s.mu.Unlock()
	var stats any
	if v.IsValid() {
		stats = v.Addr().Interface()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(struct {
		Title   string   `json:"title"`
		Final   bool     `json:"final"`
		Labels  any      `json:"labels"`
		Stats   any      `json:"stats"`
		Samples []Sample `json:"samples"`
	}{s.o.Title, final, s.o.Labels, stats, samples})
}

//go:embed status.html
var statusPage []byte

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(statusPage)
}
