package monitor

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// field is one metric drawn from a field of the stats struct.
type field struct {
	index []int
	name  string // JSON name
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	label string // a map's label; "" for a number
}

// fields lists the metrics of struct type t (see the package doc for the
// rules); names are Namespace_ + the JSON name (+ _total for counters).
func fields(t reflect.Type, constLabels prometheus.Labels) ([]field, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("monitor: stats of kind %s, want a struct", t.Kind())
	}
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's fields are the stats' own, as in
			// encoding/json (a stage's counters, declared where counted).
			sub, err := fields(f.Type, constLabels)
			if err != nil {
				return nil, err
			}
			for _, g := range sub {
				g.index = append([]int{i}, g.index...)
				out = append(out, g)
			}
			continue
		}
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		kind, label, _ := strings.Cut(f.Tag.Get("metric"), ",")
		if kind == "-" {
			continue
		}
		var typ prometheus.ValueType
		switch f.Type.Kind() {
		case reflect.Int64:
			typ = prometheus.CounterValue
		case reflect.Int, reflect.Int32, reflect.Uint64, reflect.Uint32, reflect.Float64:
			typ = prometheus.GaugeValue
		case reflect.Map:
			if f.Type.Key().Kind() != reflect.String || f.Type.Elem().Kind() != reflect.Int64 {
				continue
			}
			typ = prometheus.CounterValue
			if label == "" {
				label = "key"
			}
		default:
			continue // strings, slices, nested summaries
		}
		switch kind {
		case "counter":
			typ = prometheus.CounterValue
		case "gauge":
			typ = prometheus.GaugeValue
		}
		metric := Namespace + "_" + name
		if typ == prometheus.CounterValue {
			metric += "_total"
		}
		var labels []string
		if f.Type.Kind() == reflect.Map {
			labels = []string{label}
		}
		help := fmt.Sprintf("stats.json %q (see docs/monitoring.md)", name)
		out = append(out, field{index: f.Index, name: name, typ: typ, label: label,
			desc: prometheus.NewDesc(metric, help, labels, constLabels)})
	}
	return out, nil
}

// collector is a prometheus.Collector over the server's current stats.
type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.s.fields {
		ch <- f.desc
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	v := c.s.current()
	if !v.IsValid() {
		return
	}
	for _, f := range c.s.fields {
		x := v.FieldByIndex(f.index)
		if f.label != "" {
			keys := make([]string, 0, x.Len())
			for _, k := range x.MapKeys() {
				keys = append(keys, k.String())
			}
			sort.Strings(keys)
			for _, k := range keys {
				ch <- prometheus.MustNewConstMetric(f.desc, f.typ, float64(x.MapIndex(reflect.ValueOf(k)).Int()), k)
			}
			continue
		}
		ch <- prometheus.MustNewConstMetric(f.desc, f.typ, number(x))
	}
}

func number(x reflect.Value) float64 {
	switch x.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return float64(x.Int())
	case reflect.Uint32, reflect.Uint64:
		return float64(x.Uint())
	default:
		return x.Float()
	}
}
