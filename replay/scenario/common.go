package scenario

import "io"

// Common is what every question's config shares: the crawl it reads, how
// it reads it and reports its progress, and where its results go. Each
// question's config embeds it; [All] hands the same one to every question.
type Common struct {
	// Input is the raw crawl directory.
	Input string
	// OutDir receives the question's tables (NAME.csv, NAME.arrow) and
	// plots; "" writes nothing.
	OutDir string
	// Plots draws the question's figures (NAME.png, NAME.svg).
	Plots bool
	// Progress, when not nil, receives progress lines: rows read of the
	// crawl's URL rows (a *progress.Sink picks live or batch lines).
	Progress io.Writer `json:"-"`
	// Reading is how the crawl's URL logs are read: cut segments are
	// reported or, with Strict, refused.
	Reading Reading `json:"-"`
}

// pass is one question's reading of the crawl's URL rows: it counts them
// for the progress lines. Single-goroutine, like the stream visitors.
type pass struct {
	c    Common
	rows *rowCounter
}

// pass starts the question's reading; finish ends its progress line.
func (c Common) pass(question string) *pass {
	return &pass{c: c, rows: newRowCounter(c.Progress, "scenario "+question, c.Input)}
}

// each visits the crawl's URL stream in order, counting every row.
func (p *pass) each(order string, fn func(*Rec) error) error {
	return p.c.Reading.Each(p.c.Input, order, func(rec *Rec) error {
		p.rows.row()
		return fn(rec)
	})
}

// eachNode visits node's URL log, counting every row.
func (p *pass) eachNode(node int, fn func(*Rec) error) error {
	return p.c.Reading.EachNode(p.c.Input, node, func(rec *Rec) error {
		p.rows.row()
		return fn(rec)
	})
}

// each is one counted pass over the crawl's URL stream in order,
// reported as the question's progress; it returns the rows read.
func (c Common) each(question, order string, fn func(*Rec) error) (int64, error) {
	p := c.pass(question)
	defer p.finish()
	err := p.each(order, fn)
	return p.n(), err
}

// n is the rows read so far.
func (p *pass) n() int64 { return p.rows.n }

func (p *pass) finish() { p.rows.finish() }

// save writes res into OutDir, when there is one, with metadata naming
// Input and cfg's parameters ([runMeta]), and adds what it wrote to *files.
// It is the ending every question shares; without OutDir it writes nothing.
func (c Common) save(res resultWriter, files *[]string, cfg any) error {
	if c.OutDir == "" {
		return nil
	}
	f, err := res.write(c.OutDir, c.Plots, runMeta(c.Input, cfg))
	*files = append(*files, f...)
	return err
}

// Written lists the files a question wrote, tables and plots (and, for
// [Partition] with WriteTraces, subtraces).
func (res *PartitionResult) Written() []string { return res.Files }

// Written lists the files [SplitterCache] wrote.
func (res *SplitterCacheResult) Written() []string { return res.Files }

// Written lists the files [Threads] wrote.
func (res *ThreadsResult) Written() []string { return res.Files }

// Written lists the files [NodeLoss] wrote.
func (res *NodeLossResult) Written() []string { return res.Files }

// Written lists the files [Locality] wrote.
func (res *LocalityResult) Written() []string { return res.Files }

// asker runs the questions of [All] into s, up to the first error.
type asker struct {
	s   *Summary
	err error
}

// ask runs one question of [All], unless an earlier one failed: it adds
// the files the question wrote to a.s.Files and sets *digests from the
// question's first table (with totals, its sum over the nodes).
func ask[C any, R interface {
	Written() []string
	Tables() []*Table
}, D any](a *asker, question func(C) (R, error), cfg C, digests *[]D, totals bool) R {
	var none R
	if a.err != nil {
		return none
	}
	res, err := question(cfg)
	if err != nil {
		a.err = err
		return none
	}
	a.s.Files = append(a.s.Files, res.Written()...)
	*digests = digest[D](res.Tables()[0], totals)
	return res
}
