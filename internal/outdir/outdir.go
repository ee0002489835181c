// Package outdir is the output-directory policy of every crawltrace command
// that writes a directory.
//
// A command writes into a new or empty directory, or into one that it wrote
// itself. [Prepare] refuses a non-empty directory the command did not write
// and a directory that holds the command's earlier outputs; with
// [Options.Force] it first removes the earlier outputs (and only those), so a
// rerun never leaves a stale figure beside fresh tables. A directory the
// command did not write is written into with Force, but nothing in it is
// removed.
//
// What a command wrote is recorded in a small listing file in the directory,
// .crawltrace-outputs-COMMAND[-UNIT].json, written when the run starts and
// again by [Dir.Done]. Commands whose slices share one directory (replay
// --task i/N, condense --shard i/N, the scenario questions) give each slice
// its own unit: slices of one command sit side by side, and only the slice
// being rerun, or a whole run, counts as an earlier output. A whole run
// killed before Done (SIGKILL at a batch job's time limit) is recognised by
// its listing: what appeared in the directory after it started is its
// output.
//
// A crawl directory has one writer at a time: [LockCrawl] takes flock(2)
// locks on its .crawltrace-lock files for the writer's life, and refuses
// a second writer naming the first. Listings and lock files are the
// policy's own files, never a command's output.
package outdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// ErrRefused marks a refusal to write into an existing output (bad usage:
// the command maps it to exit status 2).
var ErrRefused = errors.New("output refused")

// refused is a one-line refusal that matches ErrRefused.
type refused struct{ msg string }

func (r refused) Error() string        { return r.msg }
func (r refused) Is(target error) bool { return target == ErrRefused }

// listingPrefix starts the name of every listing file.
const listingPrefix = ".crawltrace-outputs-"

// ownFile reports whether name is one of the policy's own files (a
// listing, a lock file), never a command's output.
func ownFile(name string) bool {
	return strings.HasPrefix(name, listingPrefix) || name == LockName
}

// Options says who writes a directory.
type Options struct {
	// Command names the command family, e.g. "replay" or "condense"; it
	// prefixes error messages.
	Command string
	// Unit names one slice of a run whose slices share the directory (e.g.
	// "task-3-of-16"); empty for a whole run, which replaces every slice.
	Unit string
	// Force removes the command's earlier outputs before the run, and
	// allows writing into a directory the command did not write.
	Force bool
}

// listing is the content of a listing file.
type listing struct {
	Command string    `json:"command"`
	Unit    string    `json:"unit,omitempty"`
	Tool    string    `json:"tool_version"`
	Started time.Time `json:"started"`
	Done    bool      `json:"done"`
	// Files are what the run wrote in the directory: top-level names for a
	// whole run, slash-separated paths for a slice (which shares
	// directories such as buckets/ with the other slices).
	Files []string `json:"files"`
	// Before lists, for a whole run, what the directory held when the run
	// started: if the run never reaches Done (killed), everything else is
	// taken to be its output.
	Before []string `json:"before,omitempty"`
	name   string
}

// Dir is an output directory prepared for one run. It is not safe for
// concurrent use.
type Dir struct {
	path   string
	opts   Options
	before map[string]bool
	own    listing
	// created: Prepare made the directory (Done removes it if the run
	// wrote nothing).
	created bool
}

func listingName(command, unit string) string {
	n := listingPrefix + command
	if unit != "" {
		n += "-" + unit
	}
	return n + ".json"
}

// Prepare applies the policy to path and creates it if needed: see the
// package documentation. Errors are one line naming the directory; a
// refusal matches [ErrRefused].
func Prepare(path string, o Options) (*Dir, error) {
	d := &Dir{path: path, opts: o, before: map[string]bool{}}
	d.own = listing{Command: o.Command, Unit: o.Unit, Tool: tracefile.ToolVersion, Started: time.Now().UTC(),
		Files: []string{}, name: listingName(o.Command, o.Unit)}
	ents, err := os.ReadDir(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fmt.Errorf("%s: output directory: %w", o.Command, err)
		}
		d.created = true
		return d, d.write()
	case err != nil:
		if st, serr := os.Stat(path); serr == nil && !st.IsDir() {
			return nil, refused{fmt.Sprintf("%s: output directory %s is a file; use another directory", o.Command, path)}
		}
		return nil, fmt.Errorf("%s: output directory: %w", o.Command, err)
	}
	var mine []listing
	var others []string
	for _, e := range ents {
		if !ownFile(e.Name()) {
			others = append(others, e.Name())
		}
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), listingPrefix) {
			continue
		}
		l, err := readListing(filepath.Join(path, e.Name()))
		if err != nil {
			continue // an unreadable listing claims nothing
		}
		if l.Command == o.Command {
			if !l.Done && l.Unit == "" {
				// A whole run that was killed: what appeared since it
				// started is its output.
				for _, n := range others {
					if !slices.Contains(l.Before, n) && !slices.Contains(l.Files, n) {
						l.Files = append(l.Files, n)
					}
				}
			}
			mine = append(mine, l)
		}
	}
	if len(others) > 0 && len(mine) == 0 && !o.Force {
		return nil, refused{fmt.Sprintf("%s: output directory %s is not empty and was not written by crawltrace %s; use --force to write into it anyway, or another directory",
			o.Command, path, o.Command)}
	}
	// Earlier outputs: a whole run replaces every slice; a slice replaces
	// itself and a whole run.
	var earlier []listing
	for _, l := range mine {
		if o.Unit == "" || l.Unit == "" || l.Unit == o.Unit {
			earlier = append(earlier, l)
		}
	}
	var present []string
	for _, l := range earlier {
		for _, f := range l.Files {
			if _, err := os.Lstat(filepath.Join(path, filepath.FromSlash(f))); err == nil && !slices.Contains(present, f) {
				present = append(present, f)
			}
		}
	}
	if len(present) > 0 && !o.Force {
		what := "an earlier run"
		if o.Unit != "" {
			what = "an earlier run of " + o.Unit
		}
		return nil, refused{fmt.Sprintf("%s: output directory %s holds the outputs of %s (%s, ...); use --force to replace them, or another directory",
			o.Command, path, what, present[0])}
	}
	for _, l := range earlier {
		for _, f := range l.Files {
			if err := os.RemoveAll(filepath.Join(path, filepath.FromSlash(f))); err != nil {
				return nil, fmt.Errorf("%s: remove earlier output: %w", o.Command, err)
			}
		}
		if err := os.Remove(filepath.Join(path, l.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: remove earlier output: %w", o.Command, err)
		}
	}
	ents, err = os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("%s: output directory: %w", o.Command, err)
	}
	for _, e := range ents {
		d.before[e.Name()] = true
		if o.Unit == "" && !ownFile(e.Name()) {
			d.own.Before = append(d.own.Before, e.Name())
		}
	}
	return d, d.write()
}

// Done records the files the run wrote: files (paths inside the directory;
// a whole run owns their top-level name, a slice exactly the path) and, for
// a whole run, every entry that appeared since Prepare. Call it after a
// failed run too, so that --force can clean up after it. A run that wrote nothing leaves no listing.
func (d *Dir) Done(files ...string) error {
	add := func(name string) {
		if name != "" && name != "." && name != ".." && !ownFile(name) && !slices.Contains(d.own.Files, name) {
			d.own.Files = append(d.own.Files, name)
		}
	}
	base, err := filepath.Abs(d.path)
	if err != nil {
		return fmt.Errorf("%s: output directory: %w", d.opts.Command, err)
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(base, abs); err == nil && rel != "." && filepath.IsLocal(rel) {
			if d.opts.Unit != "" {
				// A slice shares the directory with other slices: it
				// owns exactly what it names (buckets/map-3, not all of
				// buckets).
				add(filepath.ToSlash(rel))
			} else {
				add(strings.Split(filepath.ToSlash(rel), "/")[0])
			}
		}
	}
	if d.opts.Unit == "" {
		ents, err := os.ReadDir(d.path)
		if err != nil {
			return fmt.Errorf("%s: output directory: %w", d.opts.Command, err)
		}
		for _, e := range ents {
			if !d.before[e.Name()] {
				add(e.Name())
			}
		}
	}
	slices.Sort(d.own.Files)
	d.own.Done, d.own.Before = true, nil
	if len(d.own.Files) == 0 {
		if err := os.Remove(filepath.Join(d.path, d.own.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: %w", d.opts.Command, err)
		}
		if d.created {
			os.Remove(d.path) // only if empty
		}
		return nil
	}
	return d.write()
}

func (d *Dir) write() error {
	err := tracefile.WriteFileAtomic(filepath.Join(d.path, d.own.name), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d.own)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", d.opts.Command, err)
	}
	return nil
}

func readListing(path string) (listing, error) {
	var l listing
	b, err := os.ReadFile(path)
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, err
	}
	l.name = filepath.Base(path)
	for _, f := range l.Files {
		// A listing names entries inside the directory (a slice's may be
		// nested); anything else is not ours.
		if f == "" || f == "." || strings.Contains(f, `\`) || !filepath.IsLocal(filepath.FromSlash(f)) {
			return l, fmt.Errorf("outdir: %s: bad file name %q", path, f)
		}
	}
	return l, nil
}

// PrepareFile applies the policy to a command that writes one file: an
// existing file is refused unless force (it is then replaced when the new
// one is complete).
func PrepareFile(command, path string, force bool) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: output file: %w", command, err)
	case st.IsDir():
		return refused{fmt.Sprintf("%s: output file %s is a directory; use another file name", command, path)}
	case !force:
		return refused{fmt.Sprintf("%s: output file %s exists; use --force to replace it, or another file name", command, path)}
	}
	return nil
}
