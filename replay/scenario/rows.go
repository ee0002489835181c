package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// A question's row type is its table's description: each field tagged
// `col:"name"` is a column, in field order, so a row's values and the
// table's header cannot drift apart. An array field is one column per
// element, named in its tag (`col:"same_page,same_host,other_host,unknown"`);
// the option nullneg (`col:"dest_mismatches,nullneg"`) writes a negative
// value as not applicable (a blank CSV cell, an Arrow null). Integers are
// int64 columns, float64 float64 ones, and strings, times (UTC, RFC 3339
// with nanoseconds) and int slices (as fmt prints them) string ones.
// Fields without a col tag are not written.

// rowColumn is one column of a row type: the field it comes from, and for
// an array field the element.
type rowColumn struct {
	Column
	field   int
	elem    int // -1 for a field that is not an array
	nullNeg bool
}

// rowColumns reads the col tags of the struct type t.
func rowColumns(t reflect.Type) []rowColumn {
	var cols []rowColumn
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("col")
		if !ok {
			continue
		}
		names := strings.Split(tag, ",")
		nullNeg := names[len(names)-1] == "nullneg"
		if nullNeg {
			names = names[:len(names)-1]
		}
		ft, elem := f.Type, -1
		if ft.Kind() == reflect.Array {
			if len(names) != ft.Len() {
				panic(fmt.Sprintf("scenario: %s.%s: %d column names for %d elements", t.Name(), f.Name, len(names), ft.Len()))
			}
			ft, elem = ft.Elem(), 0
		} else if len(names) != 1 {
			panic(fmt.Sprintf("scenario: %s.%s: %d column names for one field", t.Name(), f.Name, len(names)))
		}
		for j, name := range names {
			c := rowColumn{Column: Column{Name: name, Type: columnType(t, f.Name, ft)}, field: i, elem: -1, nullNeg: nullNeg}
			if elem >= 0 {
				c.elem = j
			}
			cols = append(cols, c)
		}
	}
	return cols
}

var timeType = reflect.TypeFor[time.Time]()

// columnType is the table type of a field of Go type ft.
func columnType(t reflect.Type, field string, ft reflect.Type) arrow.DataType {
	switch {
	case ft == timeType, ft.Kind() == reflect.String, ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Int:
		return arrow.BinaryTypes.String
	case ft.Kind() == reflect.Float64:
		return arrow.PrimitiveTypes.Float64
	case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Int64, ft.Kind() >= reflect.Uint8 && ft.Kind() <= reflect.Uint32:
		return arrow.PrimitiveTypes.Int64
	}
	panic(fmt.Sprintf("scenario: %s.%s: no column type for %s", t.Name(), field, ft))
}

// cell is the table value of column c of row v.
func (c rowColumn) cell(v reflect.Value) any {
	f := v.Field(c.field)
	if c.elem >= 0 {
		f = f.Index(c.elem)
	}
	switch {
	case f.Type() == timeType:
		return f.Interface().(time.Time).UTC().Format(time.RFC3339Nano)
	case f.Kind() == reflect.Slice:
		return fmt.Sprint(f.Interface())
	case f.Kind() == reflect.String:
		return f.String()
	case f.Kind() == reflect.Float64:
		return f.Float()
	case f.CanInt():
		if c.nullNeg && f.Int() < 0 {
			return nil
		}
		return f.Int()
	}
	return int64(f.Uint())
}

// rowTable is the table name of rows, its columns R's col-tagged fields.
func rowTable[R any](name string, rows []R) *Table {
	cols := rowColumns(reflect.TypeFor[R]())
	t := &Table{Name: name, Columns: make([]Column, len(cols))}
	for i, c := range cols {
		t.Columns[i] = c.Column
	}
	for _, r := range rows {
		v := reflect.ValueOf(r)
		vals := make([]any, len(cols))
		for i, c := range cols {
			vals[i] = c.cell(v)
		}
		t.add(vals...)
	}
	return t
}

// digest is one D per row of t (with totals, per row whose node is -1),
// for scenario-summary.json: each field of D takes the column its json tag
// names, so a digest is a choice of its question's columns. A pointer
// field is null where the cell is blank (not applicable) or not a finite
// number.
func digest[D any](t *Table, totals bool) []D {
	index := map[string]int{}
	for i, c := range t.Columns {
		index[c.Name] = i
	}
	dt := reflect.TypeFor[D]()
	from := make([]int, dt.NumField())
	for i := range from {
		name, _, _ := strings.Cut(dt.Field(i).Tag.Get("json"), ",")
		j, ok := index[name]
		if !ok {
			panic(fmt.Sprintf("scenario: %s.%s: table %s has no column %q", dt.Name(), dt.Field(i).Name, t.Name, name))
		}
		from[i] = j
	}
	var out []D
	for _, r := range t.Rows {
		if totals && r[index["node"]] != int64(-1) {
			continue
		}
		var d D
		v := reflect.ValueOf(&d).Elem()
		for i, j := range from {
			setCell(v.Field(i), r[j])
		}
		out = append(out, d)
	}
	return out
}

// setCell sets f, an int, string or pointer to one, to the cell c.
func setCell(f reflect.Value, c any) {
	if f.Kind() == reflect.Pointer {
		if x, ok := c.(float64); c == nil || ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			return
		}
		f.Set(reflect.New(f.Type().Elem()))
		f = f.Elem()
	}
	switch x := c.(type) {
	case int64:
		f.SetInt(x)
	case float64:
		f.SetFloat(x)
	case string:
		f.SetString(x)
	}
}
