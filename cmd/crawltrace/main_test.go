package main

import (
	"os"
	"testing"
)

// TestMain runs the test binary as crawltrace itself when execEnv is set
// (the multi-process tests exec it), and otherwise runs the tests and
// removes the binary buildBinary made.
func TestMain(m *testing.M) {
	if os.Getenv(execEnv) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
