package main

import (
	"strings"
	"testing"
)

// Errors carry the "crawltrace: " prefix exactly once; flag errors name the
// subcommand without repeating the program name.
func TestErrorPrefixOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "crawltrace: unknown flag: --bogus\n"},
		{[]string{"condense", "--bogus"}, "crawltrace: condense: unknown flag: --bogus\n"},
		{[]string{"condense", "merge", "--bogus"}, "crawltrace: condense merge: unknown flag: --bogus\n"},
		{[]string{"replay", "x", "--sizes"}, "crawltrace: replay: flag needs an argument: --sizes\n"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	_, want, _ := runCLI(t, "version")
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || out != want || errs != "" || !strings.HasPrefix(out, "crawltrace ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0, %q", args, code, out, errs, want)
		}
	}
}
