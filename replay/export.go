package replay

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// WriteOracleGeneral writes keys as a libCacheSim oracleGeneral trace: per
// request, little-endian uint32 time (the 1-based position, wrapping after
// 2^32 requests), uint64 id (the key), uint32 size (1), and int64 the
// 1-based position of the next request for the same key, or -1. The next
// positions come from one backward pass, so the whole trace is in memory
// (8 bytes per request, plus 8 for the positions).
func WriteOracleGeneral(w io.Writer, keys []uint64) error {
	next, _ := NextUse(keys)
	bw := bufio.NewWriterSize(w, 1<<20)
	var rec [OracleRecordSize]byte
	for i, k := range keys {
		binary.LittleEndian.PutUint32(rec[0:], uint32(i+1))
		binary.LittleEndian.PutUint64(rec[4:], k)
		binary.LittleEndian.PutUint32(rec[12:], 1)
		n := next[i]
		if n >= 0 {
			n++
		}
		binary.LittleEndian.PutUint64(rec[16:], uint64(n))
		if _, err := bw.Write(rec[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteText streams src as a text trace: one decimal key per line.
func WriteText(w io.Writer, src Source) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for src.Next() {
		for _, k := range src.Keys() {
			buf = strconv.AppendUint(buf[:0], k, 10)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	if err := src.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// ExportFile converts the trace at in (format inFormat) to out in
// outFormat: oracleGeneral, text, or condensed. Text and condensed output
// stream; oracleGeneral reads the whole trace into memory.
func ExportFile(in, inFormat, out, outFormat string) error {
	of, err := NormalizeFormat(outFormat)
	if err != nil {
		return fmt.Errorf("%w: %v", tracefile.ErrBadInput, err)
	}
	src, err := Open(in, inFormat)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if of == FormatCondensed {
		w, err := tracefile.CreateCondensed(out, tracefile.Meta{CrawlID: "export of " + in, Nodes: 1, Partitioner: "export", Subtrace: tracefile.SubtraceFull})
		if err != nil {
			return err
		}
		for src.Next() {
			if err := w.AppendSlice(src.Keys()); err != nil {
				w.Abort()
				return err
			}
		}
		if err := src.Err(); err != nil {
			w.Abort()
			return err
		}
		return w.Close()
	}
	return writeFile(out, func(w io.Writer) error {
		if of == FormatText {
			return WriteText(w, src)
		}
		keys, err := ReadAll(src)
		if err != nil {
			return err
		}
		return WriteOracleGeneral(w, keys)
	})
}
