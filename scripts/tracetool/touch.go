package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/crawltrace/crawltrace/internal/hugemem"
	"golang.org/x/sys/unix"
)

// touchMain times the first write to each page of fresh memory, the cost
// docs/benchmarks.md ("Fresh memory") found behind a condense's kernel
// time on a virtual machine whose host takes back the memory its guest
// frees: each round maps -mb MiB (on huge pages with -huge, as
// internal/hugemem gives them; else an anonymous mapping of small pages,
// unless the kernel gives huge ones to every process), writes one byte a page
// and frees it, and prints the time and ms per MiB. A round that reuses
// the pages the previous one freed shows the cost without the host.
func touchMain(args []string) error {
	fs := flag.NewFlagSet("touch", flag.ContinueOnError)
	mb := fs.Int("mb", 400, "MiB per round")
	huge := fs.Bool("huge", false, "map the memory on huge pages (internal/hugemem)")
	rounds := fs.Int("rounds", 3, "rounds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n := *mb << 20
	for r := range *rounds {
		var b []byte
		var blk *hugemem.Block
		if *huge {
			blk = hugemem.Alloc(n)
			b = blk.Bytes()
		} else {
			var err error
			if b, err = unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON); err != nil {
				return fmt.Errorf("touch: mmap: %w", err)
			}
		}
		t := time.Now()
		for i := 0; i < n; i += 4096 {
			b[i] = 1
		}
		d := time.Since(t)
		fmt.Printf("round %d: %d MiB touched in %v, %.2f ms/MiB (huge pages asked: %v)\n", r, *mb, d.Round(time.Millisecond), float64(d.Microseconds())/1000/float64(*mb), *huge)
		if blk != nil {
			blk.Free()
		} else if err := unix.Munmap(b); err != nil {
			return fmt.Errorf("touch: munmap: %w", err)
		}
	}
	return nil
}
