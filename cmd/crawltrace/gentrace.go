package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/replay"
)

func init() {
	register(func() *cobra.Command {
		cfg := replay.DefaultGenConfig()
		var out string
		var force bool
		cmd := &cobra.Command{
			Use:   "gen-trace -o FILE",
			Short: "Write a synthetic condensed trace (Zipf popularity plus locality)",
			Long: `gen-trace writes a condensed trace of --requests requests over --keys keys with
Zipf(--alpha) popularity; with probability --locality a request instead
repeats one of the last --window requests (a model of host locality). Keys
are scrambled ranks, so they look like fingerprints. Equal flags give equal
traces.`,
			Example: `  crawltrace gen-trace -o synth.arrow --requests 20000000 --keys 2000000 --alpha 0.9 --locality 0.3`,
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if out == "" {
					return badInput("gen-trace: -o FILE is required")
				}
				if err := outdir.PrepareFile("gen-trace", out, force); err != nil {
					return err
				}
				if err := replay.GenerateFile(out, cfg); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d requests)\n", out, cfg.Requests)
				return nil
			},
		}
		f := cmd.Flags()
		f.StringVarP(&out, "out", "o", "", "output file (condensed trace)")
		f.BoolVar(&force, "force", false, "replace an existing output file")
		f.Int64Var(&cfg.Requests, "requests", cfg.Requests, "number of requests")
		f.IntVar(&cfg.Keys, "keys", cfg.Keys, "number of distinct keys in the popularity distribution")
		f.Float64Var(&cfg.Alpha, "alpha", cfg.Alpha, "Zipf exponent (0 = uniform)")
		f.Float64Var(&cfg.Locality, "locality", cfg.Locality, "probability of re-using a recent key, in [0,1]")
		f.IntVar(&cfg.Window, "window", cfg.Window, "number of recent requests --locality draws from")
		f.Uint64Var(&cfg.Seed, "trace-seed", cfg.Seed, "random seed of the generated trace")
		alias(f, "seed", "trace-seed")
		return cmd
	})
}
