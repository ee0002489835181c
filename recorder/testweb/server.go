package testweb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is a running test web bound to a TCP address. It is safe for
// concurrent use.
type Server struct {
	*httpServer
	web *Web
	tls bool // served over TLS ([ServeWebTLS])
}

// Serve builds the web described by c and serves it on addr (for example
// "127.0.0.1:0" for any free port) until ctx is done or Close is called.
// The server counts requests per connection ([Web.ConnContext]).
func Serve(ctx context.Context, addr string, c Config) (*Server, error) {
	w, err := New(c)
	if err != nil {
		return nil, err
	}
	return ServeWeb(ctx, addr, w)
}

// ServeWeb serves an existing web on addr, like [Serve].
func ServeWeb(ctx context.Context, addr string, w *Web) (*Server, error) {
	hs, err := serveHTTP(ctx, addr, w.server())
	if err != nil {
		return nil, err
	}
	return &Server{httpServer: hs, web: w}, nil
}

// server returns the settings w is served with, over TLS or not: its
// handler, the per-connection request count and the time and size limits.
func (w *Web) server() *http.Server {
	return &http.Server{
		Handler:           w.Handler(),
		ConnContext:       w.ConnContext,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// URL returns "http://ADDR/" ("https://ADDR/" over TLS), the root index.
func (s *Server) URL() string {
	if s.tls {
		return "https://" + s.Addr() + "/"
	}
	return "http://" + s.Addr() + "/"
}

// Web returns the web being served (the ground truth).
func (s *Server) Web() *Web { return s.web }

// httpServer is an HTTP server bound to a TCP address, shared by the
// synthetic and the hostile web. It is safe for concurrent use.
type httpServer struct {
	ln   net.Listener
	srv  *http.Server
	once sync.Once
	done chan struct{}
	err  error
}

// serveHTTP serves srv on addr until ctx is done or Close is called,
// over TLS when srv.TLSConfig is set.
func serveHTTP(ctx context.Context, addr string, srv *http.Server) (*httpServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("testweb: listen %s: %w", addr, err)
	}
	s := &httpServer{ln: ln, srv: srv, done: make(chan struct{})}
	go func() {
		var err error
		if srv.TLSConfig != nil {
			err = s.srv.ServeTLS(ln, "", "")
		} else {
			err = s.srv.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("testweb: serve %s: %w", ln.Addr(), err)
		}
		close(s.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// Addr returns the address the server listens on, as "127.0.0.1:PORT".
func (s *httpServer) Addr() string { return s.ln.Addr().String() }

// Done is closed when the server has stopped.
func (s *httpServer) Done() <-chan struct{} { return s.done }

// Close stops the server at once, closing open connections, and returns
// any error the server stopped with.
func (s *httpServer) Close() error {
	s.once.Do(func() { s.srv.Close() })
	<-s.done
	return s.err
}
