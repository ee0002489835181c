package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// validateBatch checks that every column's buffers are as long as its
// length says and that string offsets are in bounds and non-decreasing.
// Arrow's Go reader does not check these, and accessors would index out of
// range on a corrupt file.
func validateBatch(rec arrow.RecordBatch) error {
	rows := int(rec.NumRows())
	for c := 0; c < int(rec.NumCols()); c++ {
		col := rec.Column(c)
		d := col.Data()
		if d.Len() != rows || d.Offset() != 0 {
			return fmt.Errorf("column %d: length %d in a %d-row batch", c, d.Len(), rows)
		}
		bufs := d.Buffers()
		if col.NullN() > 0 {
			if len(bufs) == 0 || bufs[0] == nil || bufs[0].Len() < (rows+7)/8 {
				return fmt.Errorf("column %d: short validity bitmap", c)
			}
		}
		switch dt := col.DataType().(type) {
		case arrow.FixedWidthDataType:
			w := dt.BitWidth()
			if len(bufs) < 2 || (rows > 0 && (bufs[1] == nil || bufs[1].Len()*8 < rows*w)) {
				return fmt.Errorf("column %d: short data buffer", c)
			}
		case *arrow.StringType:
			if len(bufs) < 3 || bufs[1] == nil || bufs[1].Len() < 4*(rows+1) {
				if rows == 0 {
					continue
				}
				return fmt.Errorf("column %d: short offsets buffer", c)
			}
			off := bufs[1].Bytes()
			dataLen := 0
			if bufs[2] != nil {
				dataLen = bufs[2].Len()
			}
			prev := int32(binary.LittleEndian.Uint32(off))
			if prev < 0 {
				return fmt.Errorf("column %d: negative offset", c)
			}
			for i := 1; i <= rows; i++ {
				o := int32(binary.LittleEndian.Uint32(off[4*i:]))
				if o < prev || int(o) > dataLen {
					return fmt.Errorf("column %d: string offset out of range at row %d", c, i-1)
				}
				prev = o
			}
		default:
			return errors.New("unexpected column type " + dt.String())
		}
	}
	return nil
}
