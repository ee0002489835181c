package warcout

import (
	"encoding/gob"
	"io"
)

// Part is the writer's checkpoint part, "warc" (a recorder/checkpoint
// Part): its files and their sizes at the cut, and its counters. Loading
// cuts the files back to those sizes, moving what follows into the
// discard directory, and restores the counters.
type Part struct {
	w          *Writer
	discardDir string
	restored   func(cut int64)
}

// Part returns the writer's checkpoint part. A load moves the bytes it
// cuts into discardDir and then calls restored with their count.
func (w *Writer) Part(discardDir string, restored func(cut int64)) *Part {
	return &Part{w: w, discardDir: discardDir, restored: restored}
}

// savedWARC is the warc part. gob writes its name into the checkpoint:
// renaming it, or a field, changes the part's bytes.
type savedWARC struct {
	State State
	Stats Stats
}

// Name is the part's name in a checkpoint.
func (*Part) Name() string { return "warc" }

// Save writes what is queued, syncs the files and saves their sizes and
// the counters.
func (p *Part) Save(out io.Writer) error {
	st, err := p.w.Checkpoint()
	if err != nil {
		return err
	}
	return gob.NewEncoder(out).Encode(&savedWARC{State: st, Stats: p.w.Stats()})
}

// Load restores the files and counters a Save saved.
func (p *Part) Load(r io.Reader) error {
	var v savedWARC
	if err := gob.NewDecoder(r).Decode(&v); err != nil {
		return err
	}
	cut, err := p.w.Restore(&v.State, p.discardDir)
	if err != nil {
		return err
	}
	p.w.setStats(v.Stats)
	p.restored(cut)
	return nil
}
