package peer

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// BatchContentType is the media type of a [Batch] on the wire: one Arrow
// IPC stream holding one record batch with columns url (utf8), kind (utf8)
// and source (uint64); the schema metadata carries the batch id:
// crawltrace.from, crawltrace.epoch (the sender's incarnation that made the
// batch; absent means 0) and crawltrace.seq.
const BatchContentType = "application/vnd.apache.arrow.stream"

var batchFields = []arrow.Field{
	{Name: "url", Type: arrow.BinaryTypes.String},
	{Name: "kind", Type: arrow.BinaryTypes.String},
	{Name: "source", Type: arrow.PrimitiveTypes.Uint64},
}

// EncodeBatch writes b as an Arrow IPC stream.
func EncodeBatch(w io.Writer, b *Batch) error {
	md := arrow.NewMetadata([]string{"crawltrace.from", "crawltrace.epoch", "crawltrace.seq"},
		[]string{strconv.Itoa(b.From), strconv.FormatUint(b.Epoch, 10), strconv.FormatUint(b.Seq, 10)})
	schema := arrow.NewSchema(batchFields, &md)
	mem := memory.DefaultAllocator
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	ub := rb.Field(0).(*array.StringBuilder)
	kb := rb.Field(1).(*array.StringBuilder)
	sb := rb.Field(2).(*array.Uint64Builder)
	ub.AppendValues(b.URLs, nil)
	for i := range b.URLs {
		k := ""
		if i < len(b.Kinds) {
			k = b.Kinds[i]
		}
		kb.Append(k)
		var s uint64
		if i < len(b.Source) {
			s = b.Source[i]
		}
		sb.Append(s)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	iw := ipc.NewWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := iw.Write(rec); err != nil {
		return fmt.Errorf("recorder: encode batch: %w", err)
	}
	if err := iw.Close(); err != nil {
		return fmt.Errorf("recorder: encode batch: %w", err)
	}
	return nil
}

func encodeBatchBytes(b *Batch) ([]byte, error) {
	var buf bytes.Buffer
	err := EncodeBatch(&buf, b)
	return buf.Bytes(), err
}

// DecodeBatch reads a batch written by [EncodeBatch]. The stream's framing
// is checked before Arrow decodes it (tracefile.CheckStream), so a corrupt
// or hostile body is an error, never a huge allocation.
func DecodeBatch(r io.Reader) (b *Batch, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("recorder: decode batch: corrupt stream (%v)", p)
		}
	}()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("recorder: decode batch: %w", err)
	}
	if err := tracefile.CheckStream(data); err != nil {
		return nil, fmt.Errorf("recorder: decode batch: %w", err)
	}
	ir, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, fmt.Errorf("recorder: decode batch: %w", err)
	}
	defer ir.Release()
	s := ir.Schema()
	if !s.Equal(arrow.NewSchema(batchFields, nil)) {
		return nil, fmt.Errorf("recorder: decode batch: unexpected schema %s", s)
	}
	md := s.Metadata()
	b = &Batch{}
	i := md.FindKey("crawltrace.from")
	if i < 0 {
		return nil, fmt.Errorf("recorder: decode batch: no crawltrace.from")
	}
	if b.From, err = strconv.Atoi(md.Values()[i]); err != nil || b.From < 0 {
		return nil, fmt.Errorf("recorder: decode batch: bad crawltrace.from %q", md.Values()[i])
	}
	if i := md.FindKey("crawltrace.epoch"); i >= 0 {
		if b.Epoch, err = strconv.ParseUint(md.Values()[i], 10, 64); err != nil {
			return nil, fmt.Errorf("recorder: decode batch: bad crawltrace.epoch %q", md.Values()[i])
		}
	}
	i = md.FindKey("crawltrace.seq")
	if i < 0 {
		return nil, fmt.Errorf("recorder: decode batch: no crawltrace.seq")
	}
	if b.Seq, err = strconv.ParseUint(md.Values()[i], 10, 64); err != nil || b.Seq == 0 {
		return nil, fmt.Errorf("recorder: decode batch: bad crawltrace.seq %q", md.Values()[i])
	}
	for ir.Next() {
		rec := ir.RecordBatch()
		us := rec.Column(0).(*array.String)
		ks := rec.Column(1).(*array.String)
		ss := rec.Column(2).(*array.Uint64)
		for i := 0; i < int(rec.NumRows()); i++ {
			b.URLs = append(b.URLs, strings.Clone(us.Value(i)))
			b.Kinds = append(b.Kinds, strings.Clone(ks.Value(i)))
			b.Source = append(b.Source, ss.Value(i))
		}
	}
	if err := ir.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("recorder: decode batch: %w", err)
	}
	return b, nil
}
