package outdir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/crawltrace/crawltrace/internal/outdir"
)

func Example() {
	root, _ := os.MkdirTemp("", "outdir-example-")
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "results")
	run := func(force bool) error {
		d, err := outdir.Prepare(dir, outdir.Options{Command: "replay", Force: force})
		if err != nil {
			return err
		}
		csv := filepath.Join(dir, "results.csv")
		os.WriteFile(csv, []byte("trace,policy\n"), 0o644)
		return d.Done(csv)
	}
	fmt.Println(run(false))
	err := run(false)
	fmt.Println(strings.ReplaceAll(err.Error(), root, "ROOT"))
	fmt.Println(run(true))
	// Output:
	// <nil>
	// replay: output directory ROOT/results holds the outputs of an earlier run (results.csv, ...); use --force to replace them, or another directory
	// <nil>
}
