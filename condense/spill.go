package condense

import (
	"encoding/binary"
	"errors"
)

// appendRec appends one spill record to b: head (fingerprint uint64, node
// uint16), the URL's length as a uvarint, the URL bytes.
func appendRec(b, head []byte, u string) []byte {
	b = append(b, head...)
	b = binary.AppendUvarint(b, uint64(len(u)))
	return append(b, u...)
}

// decodeRec reads the spill record at b[off:].
func decodeRec(b []byte, off int) (fp uint64, node uint16, u []byte, next int, err error) {
	if off+10 > len(b) {
		return 0, 0, nil, 0, errors.New("truncated record")
	}
	fp = binary.LittleEndian.Uint64(b[off:])
	node = binary.LittleEndian.Uint16(b[off+8:])
	n, k := binary.Uvarint(b[off+10:])
	if k <= 0 || off+10+k+int(n) > len(b) {
		return 0, 0, nil, 0, errors.New("truncated record")
	}
	start := off + 10 + k
	return fp, node, b[start : start+int(n)], start + int(n), nil
}
