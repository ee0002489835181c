package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// caught is the number of the first SIGINT or SIGTERM a command's
// signalContext received (0: none). runWith turns it into exit status
// 128+N (130 for SIGINT, 143 for SIGTERM), so an interrupted batch job
// does not look successful.
var caught atomic.Int32

// signalContext is canceled by the first SIGINT or SIGTERM, so the command
// stops cleanly and flushes what it wrote; a second one exits the process at
// once (segments already flushed stay readable).
func signalContext(parent context.Context) (context.Context, func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			caught.CompareAndSwap(0, int32(signum(s)))
			fmt.Fprintln(os.Stderr, "crawltrace: stopping (signal again to abort)")
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-ch:
			fmt.Fprintln(os.Stderr, "crawltrace: aborted")
			os.Exit(128 + signum(s))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

func signum(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return int(syscall.SIGINT)
}

// signalName names the signals signalContext catches.
func signalName(n int32) string {
	switch syscall.Signal(n) {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return fmt.Sprintf("signal %d", n)
}
