// Command crawltrace records, condenses and replays web-crawl URL traces.
//
// The command layer is thin: every subcommand binds its flags into a library
// config struct and calls the library package that does the work (recorder,
// condense, replay, ...). Errors are mapped to exit codes here and nowhere
// else: 2 for bad input or usage, 1 for anything else, 130 (SIGINT) or 143
// (SIGTERM) when a signal stopped the run.
package main

import "os"

func main() { os.Exit(run(os.Args[1:])) }
