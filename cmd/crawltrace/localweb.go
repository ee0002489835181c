package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// localWebKeys are the keys of crawl's --local-web, named as testweb's
// flags are.
var localWebKeys = []string{"hosts", "pages", "seed", "traps"}

// addLocalWebFlag binds crawl's --local-web into spec.
func addLocalWebFlag(f *pflag.FlagSet, spec *string) {
	f.StringVar(spec, "local-web", "", "crawl the local web in this process, deterministically on a virtual clock: "+
		"KEY=N,... of "+strings.Join(localWebKeys, ", ")+", as testweb's flags (a key left out takes testweb's default; "+
		"'default' takes them all); the seeds default to its home pages")
}

// parseLocalWeb is the test web a --local-web spec describes.
func parseLocalWeb(spec string) (testweb.Config, error) {
	wc := testweb.DefaultConfig()
	if strings.TrimSpace(spec) == "" || spec == "default" {
		return wc, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n < 0 {
			return wc, fmt.Errorf("%q: want KEY=N with KEY one of %s", kv, strings.Join(localWebKeys, ", "))
		}
		switch k {
		case "hosts":
			wc.Hosts = int(n)
		case "pages":
			wc.PagesPerHost = int(n)
		case "seed":
			wc.Seed = n
		case "traps":
			wc.TrapHosts = int(n)
		default:
			return wc, fmt.Errorf("unknown key %q (want %s)", k, strings.Join(localWebKeys, ", "))
		}
	}
	return wc, nil
}

// applyLocalWeb makes cfg a deterministic crawl of the local web spec
// describes (recorder.Config.Local, with spec saved in Config.LocalWeb
// for a resume), seeded with its home pages when no seed was given. An
// empty spec leaves cfg alone.
func applyLocalWeb(spec string, cfg *recorder.Config) error {
	if spec == "" {
		return nil
	}
	wc, err := parseLocalWeb(spec)
	if err != nil {
		return badInput("crawl: --local-web %v", err)
	}
	web, err := testweb.New(wc)
	if err != nil {
		return badInput("crawl: --local-web: %v", err)
	}
	cfg.Local = &recorder.LocalWeb{Handler: web.Handler()}
	cfg.LocalWeb = spec
	if len(cfg.Seeds) == 0 {
		cfg.Seeds = web.Seeds()
	}
	return nil
}
