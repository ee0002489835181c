// Command tracetool supports the benchmark and CI scripts: it generates raw
// traces, times `crawltrace condense` against `LC_ALL=C sort -u | wc -l`
// (scripts/bench-condense.sh), and checks that sharded and unsharded runs
// agree, and that a crawl launched by Slurm fetched a one-node crawl's
// pages (.ci/slurm).
//
//	tracetool gen -o DIR [-urls N -distinct F -locality F -window W -hosts H -pad P]
//	tracetool bench [flags] DIR...
//	tracetool same-condense DIR_A DIR_B
//	tracetool same-replay RESULTS_A.csv RESULTS_B.csv
//	tracetool same-pages CRAWL_A CRAWL_B
//	tracetool touch [-mb N -huge -rounds R]
//	tracetool span DIR
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tracetool gen|bench|same-condense|same-replay|same-pages|touch|span ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = genMain(os.Args[2:])
	case "bench":
		err = benchMain(os.Args[2:])
	case "touch":
		err = touchMain(os.Args[2:])
	case "span":
		err = spanMain(os.Args[2:])
	case "same-condense", "same-replay", "same-pages":
		switch {
		case len(os.Args) != 4:
			err = fmt.Errorf("usage: tracetool %s A B", os.Args[1])
		case os.Args[1] == "same-condense":
			err = sameCondense(os.Args[2], os.Args[3])
		case os.Args[1] == "same-pages":
			err = samePages(os.Args[2], os.Args[3])
		default:
			err = sameReplay(os.Args[2], os.Args[3])
		}
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracetool:", err)
		os.Exit(1)
	}
}
