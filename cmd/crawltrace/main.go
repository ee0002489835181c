// Command crawltrace records, condenses and replays web-crawl URL traces.
//
// The command layer is thin: every subcommand binds its flags into a library
// config struct and calls the library package that does the work (recorder,
// condense, replay, ...). Errors are mapped to exit codes here and nowhere
// else: 2 for bad input or usage, 1 for anything else, 130 (SIGINT) or 143
// (SIGTERM) when a signal stopped the run.
//
// CRAWLTRACE_CPUPROFILE=FILE writes a CPU profile of the whole run (any
// command) to FILE, for `go tool pprof`.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

func main() {
	stop, err := startCPUProfile(os.Getenv("CRAWLTRACE_CPUPROFILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crawltrace: "+err.Error())
		os.Exit(2)
	}
	code := run(os.Args[1:])
	stop()
	os.Exit(code)
}

// startCPUProfile starts a CPU profile written to path ("" = none) and
// returns the function that ends it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("CRAWLTRACE_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("CRAWLTRACE_CPUPROFILE: %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "crawltrace: CRAWLTRACE_CPUPROFILE: "+err.Error())
		}
	}, nil
}
