package replay

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Trace input formats accepted by [Open] and [Config.Format].
const (
	// FormatCondensed is crawltrace's condensed trace: an Arrow IPC file
	// with one uint64 column of fingerprints, read zero-copy from a memory
	// map.
	FormatCondensed = "condensed"
	// FormatOracleGeneral is libCacheSim's oracleGeneral binary trace: 24
	// bytes per request, little-endian, no header: uint32 time, uint64 id,
	// uint32 size, int64 next-request position (or -1). Only id is used.
	FormatOracleGeneral = "oracleGeneral"
	// FormatText is one key per line: a decimal uint64, a 0x-prefixed hex
	// uint64 of at most 16 digits, or any other string, which is hashed with
	// xxHash64. Surrounding white space is trimmed and empty lines are
	// skipped. A line with a NUL or other control byte, invalid UTF-8, or a
	// decimal number that overflows uint64 is corrupt.
	FormatText = "text"
)

// Formats lists the input formats.
func Formats() []string { return []string{FormatCondensed, FormatOracleGeneral, FormatText} }

// NormalizeFormat returns the canonical spelling of a format name (matched
// case-insensitively; "" means condensed), or an error naming the formats.
func NormalizeFormat(name string) (string, error) {
	if name == "" {
		return FormatCondensed, nil
	}
	for _, f := range Formats() {
		if strings.EqualFold(name, f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("replay: unknown trace format %q (want %s)", name, strings.Join(Formats(), ", "))
}

// batchSize is the number of keys per batch of the decoded (non-condensed)
// sources.
const batchSize = 1 << 16

// Source streams the keys of one trace in batches, like bufio.Scanner: call
// Next until it returns false, read Keys after each true Next, then check
// Err. A Source is not safe for concurrent use; open one per goroutine.
type Source interface {
	// Next advances to the next non-empty batch.
	Next() bool
	// Keys is the current batch. It is valid until the next call to Next
	// (condensed sources keep it valid until Close) and must not be
	// modified.
	Keys() []uint64
	// Err is the first error met by Next. Errors caused by a malformed file
	// wrap [tracefile.ErrCorrupt] and name the file and offset or line.
	Err() error
	// Reset rewinds to the first batch, for multi-pass algorithms.
	Reset() error
	// Len is the number of requests in the trace, or -1 when unknown before
	// a full pass.
	Len() int64
	// Close releases the file.
	Close() error
}

// Open opens the trace at path in the given format (see [NormalizeFormat]).
func Open(path, format string) (Source, error) {
	f, err := NormalizeFormat(format)
	if err != nil {
		return nil, err
	}
	switch f {
	case FormatOracleGeneral:
		return openOracle(path)
	case FormatText:
		return openText(path)
	default:
		return openCondensed(path)
	}
}

// ReadAll reads every key of src into one slice.
func ReadAll(src Source) ([]uint64, error) {
	n := src.Len()
	if n < 0 {
		n = 0
	}
	out := make([]uint64, 0, n)
	for src.Next() {
		out = append(out, src.Keys()...)
	}
	return out, src.Err()
}

// ReadFile opens path in format and reads all its keys.
func ReadFile(path, format string) ([]uint64, error) {
	return readFileCtx(context.Background(), path, format)
}

// readFileCtx is ReadFile stopped, between batches, when ctx is done.
func readFileCtx(ctx context.Context, path, format string) ([]uint64, error) {
	src, err := Open(path, format)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	n := max(src.Len(), 0)
	out := make([]uint64, 0, n)
	for src.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, src.Keys()...)
	}
	return out, src.Err()
}

// sliceSource serves an in-memory trace in batches.
type sliceSource struct {
	keys []uint64
	pos  int
	cur  []uint64
}

// NewSliceSource returns a [Source] over keys, in batches of up to 64Ki keys.
func NewSliceSource(keys []uint64) Source { return &sliceSource{keys: keys} }

func (s *sliceSource) Next() bool {
	if s.pos >= len(s.keys) {
		s.cur = nil
		return false
	}
	end := min(s.pos+batchSize, len(s.keys))
	s.cur = s.keys[s.pos:end]
	s.pos = end
	return true
}
func (s *sliceSource) Keys() []uint64 { return s.cur }
func (s *sliceSource) Err() error     { return nil }
func (s *sliceSource) Reset() error   { s.pos, s.cur = 0, nil; return nil }
func (s *sliceSource) Len() int64     { return int64(len(s.keys)) }
func (s *sliceSource) Close() error   { return nil }

var _ Source = (*sliceSource)(nil)

// corruptf builds an error wrapping tracefile.ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{tracefile.ErrCorrupt}, args...)...)
}

// expandDirs replaces each directory in args by the files inDir finds in
// it; files are kept as they are. An argument that cannot be read is bad
// input, reported as "<what>: <the error>".
func expandDirs(args []string, what string, inDir func(dir string) ([]string, error)) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", tracefile.ErrBadInput, what, err)
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		m, err := inDir(a)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	return out, nil
}
