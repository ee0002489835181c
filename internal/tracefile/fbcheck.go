package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Arrow's Go reader decodes the flatbuffers of a file (footer, schema,
// message headers) with the flatbuffers accessors, which index the buffer
// without checking: a corrupt offset or length is a slice-bounds panic.
// fbuf checks, before arrow-go sees a flatbuffer, that every table,
// vtable, vector and string it will follow lies inside the buffer. The
// checks follow the tables of Schema.fbs, Message.fbs and File.fbs that
// arrow-go reads.

// maxFieldDepth bounds the nesting of schema fields (ours are flat).
const maxFieldDepth = 32

var errFB = errors.New("malformed flatbuffer")

// fbuf is a bounds-checked view of one flatbuffer.
type fbuf struct{ b []byte }

// fbTable is a checked table: its position, its vtable and the vtable's
// length in bytes.
type fbTable struct{ pos, vt, vtLen int }

func (f fbuf) u32(p int) int64 { return int64(binary.LittleEndian.Uint32(f.b[p:])) }

// root returns the buffer's root table.
func (f fbuf) root() (fbTable, error) {
	if len(f.b) < 8 {
		return fbTable{}, fmt.Errorf("%w: %d bytes", errFB, len(f.b))
	}
	return f.table(f.u32(0))
}

// table checks the table at pos and its vtable.
func (f fbuf) table(pos int64) (fbTable, error) {
	n := int64(len(f.b))
	if pos < 0 || pos+4 > n {
		return fbTable{}, fmt.Errorf("%w: table at %d outside %d bytes", errFB, pos, n)
	}
	vt := pos - int64(int32(binary.LittleEndian.Uint32(f.b[pos:])))
	if vt < 0 || vt+4 > n {
		return fbTable{}, fmt.Errorf("%w: vtable of table at %d out of range", errFB, pos)
	}
	vtLen := int64(binary.LittleEndian.Uint16(f.b[vt:]))
	objLen := int64(binary.LittleEndian.Uint16(f.b[vt+2:]))
	if vtLen < 4 || vtLen%2 != 0 || vt+vtLen > n || pos+objLen > n {
		return fbTable{}, fmt.Errorf("%w: vtable of table at %d has a bad length", errFB, pos)
	}
	return fbTable{pos: int(pos), vt: int(vt), vtLen: int(vtLen)}, nil
}

// field returns the position of t's field at vtable slot (4, 6, 8, ...)
// holding size bytes, or -1 when the field is absent.
func (f fbuf) field(t fbTable, slot, size int) (int, error) {
	if slot+2 > t.vtLen {
		return -1, nil
	}
	o := int(binary.LittleEndian.Uint16(f.b[t.vt+slot:]))
	if o == 0 {
		return -1, nil
	}
	p := t.pos + o
	if p+size > len(f.b) {
		return 0, fmt.Errorf("%w: field %d of table at %d out of range", errFB, slot, t.pos)
	}
	return p, nil
}

// scalar reads an unsigned little-endian field of size 1, 2, 4 or 8 bytes
// (0 when absent).
func (f fbuf) scalar(t fbTable, slot, size int) (uint64, error) {
	p, err := f.field(t, slot, size)
	if err != nil || p < 0 {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(f.b[p]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(f.b[p:])), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(f.b[p:])), nil
	}
	return binary.LittleEndian.Uint64(f.b[p:]), nil
}

// vector checks the vector (or string, elem 1) at slot and returns the
// position of its first element and its length; absent is length 0.
func (f fbuf) vector(t fbTable, slot, elem int) (start, length int, err error) {
	p, err := f.field(t, slot, 4)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	n := int64(len(f.b))
	v := int64(p) + f.u32(p)
	if v+4 > n {
		return 0, 0, fmt.Errorf("%w: vector %d of table at %d out of range", errFB, slot, t.pos)
	}
	l := f.u32(int(v))
	if v+4+l*int64(elem) > n {
		return 0, 0, fmt.Errorf("%w: vector %d of table at %d: length %d out of range", errFB, slot, t.pos, l)
	}
	return int(v + 4), int(l), nil
}

// sub checks the table (or union value) that t's field at slot points to.
func (f fbuf) sub(t fbTable, slot int) (fbTable, bool, error) {
	p, err := f.field(t, slot, 4)
	if err != nil || p < 0 {
		return fbTable{}, false, err
	}
	s, err := f.table(int64(p) + f.u32(p))
	return s, err == nil, err
}

// tables checks every table of the vector of tables at slot.
func (f fbuf) tables(t fbTable, slot int) ([]fbTable, error) {
	start, l, err := f.vector(t, slot, 4)
	if err != nil {
		return nil, err
	}
	out := make([]fbTable, 0, l)
	for i := range l {
		p := start + 4*i
		s, err := f.table(int64(p) + f.u32(p))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// checkKeyValues checks a vector of KeyValue {key: string; value: string}.
func (f fbuf) checkKeyValues(t fbTable, slot int) error {
	kvs, err := f.tables(t, slot)
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		if _, _, err := f.vector(kv, 4, 1); err != nil {
			return err
		}
		if _, _, err := f.vector(kv, 6, 1); err != nil {
			return err
		}
	}
	return nil
}

// Type union tags (Schema.fbs) whose tables hold more than scalars.
const (
	fbTypeTimestamp = 10 // timezone: string
	fbTypeUnion     = 14 // typeIds: [int]
	fbTypeMax       = 26 // LargeListView, the last tag arrow-go knows
)

// checkSchema checks a Schema table: little-endian, fields (recursively),
// metadata and features.
func (f fbuf) checkSchema(s fbTable) error {
	// A big-endian schema makes arrow-go swap every buffer in place: on a
	// mapped file, a write to read-only memory (a fatal fault, not a
	// panic). crawltrace writes little-endian only.
	if e, err := f.scalar(s, 4, 2); err != nil {
		return err
	} else if e != 0 {
		return fmt.Errorf("%w: schema endianness %d (crawltrace files are little-endian)", errFB, e)
	}
	if err := f.checkFields(s, 6, 0); err != nil {
		return err
	}
	if err := f.checkKeyValues(s, 8); err != nil {
		return err
	}
	_, _, err := f.vector(s, 10, 8)
	return err
}

// checkFields checks the vector of Field tables at slot of t.
func (f fbuf) checkFields(t fbTable, slot, depth int) error {
	if depth > maxFieldDepth {
		return fmt.Errorf("%w: fields nested too deep", errFB)
	}
	fields, err := f.tables(t, slot)
	if err != nil {
		return err
	}
	for _, fl := range fields {
		if _, _, err := f.vector(fl, 4, 1); err != nil { // name
			return err
		}
		tag, err := f.scalar(fl, 8, 1)
		if err != nil {
			return err
		}
		if tag == 0 || tag > fbTypeMax {
			return fmt.Errorf("%w: field type tag %d", errFB, tag)
		}
		typ, ok, err := f.sub(fl, 10)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: field without a type", errFB)
		}
		switch tag {
		case fbTypeTimestamp:
			_, _, err = f.vector(typ, 6, 1)
		case fbTypeUnion:
			_, _, err = f.vector(typ, 6, 4)
		}
		if err != nil {
			return err
		}
		if dict, ok, err := f.sub(fl, 12); err != nil {
			return err
		} else if ok {
			if _, _, err := f.sub(dict, 6); err != nil { // indexType
				return err
			}
		}
		if err := f.checkFields(fl, 14, depth+1); err != nil {
			return err
		}
		if err := f.checkKeyValues(fl, 16); err != nil {
			return err
		}
	}
	return nil
}

// metaValueAt finds, in the Footer table root, the value of the schema's
// custom metadata key: the position of its first byte in the buffer and
// its length; -1 when the key is absent. A key present twice is an error.
func (f fbuf) metaValueAt(root fbTable, key string) (pos, n int, err error) {
	s, ok, err := f.sub(root, 6)
	if err != nil || !ok {
		return -1, 0, err
	}
	kvs, err := f.tables(s, 8)
	if err != nil {
		return -1, 0, err
	}
	pos = -1
	for _, kv := range kvs {
		ks, kn, err := f.vector(kv, 4, 1)
		if err != nil {
			return -1, 0, err
		}
		if string(f.b[ks:ks+kn]) != key {
			continue
		}
		if pos >= 0 {
			return -1, 0, fmt.Errorf("%w: metadata key %s twice", errFB, key)
		}
		if pos, n, err = f.vector(kv, 6, 1); err != nil {
			return -1, 0, err
		}
	}
	return pos, n, nil
}
