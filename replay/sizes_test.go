package replay

import (
	"errors"
	"slices"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"16,1024", []int{16, 1024}},
		{"1024, 16,16", []int{16, 1024}},
		{"1k,64k,1m", []int{1024, 65536, 1 << 20}},
		{"1K,1g", []int{1024, 1 << 30}},
		{"2^0..2^3", []int{1, 2, 4, 8}},
		{"2^10", []int{1024}},
		{"3..20", []int{3, 6, 12}},
		{"1k..4k,1", []int{1, 1024, 2048, 4096}},
		{"", nil},
		{"0", nil},
		{"-4", nil},
		{"abc", nil},
		{"3^2", nil},
		{"2^x", nil},
		{"8..2", nil},
		{"1..", nil},
		{"99999999999999999999", nil},
	}
	for _, tt := range tests {
		got, err := ParseSizes(tt.in)
		if tt.want == nil {
			if !errors.Is(err, tracefile.ErrBadInput) {
				t.Errorf("ParseSizes(%q) = %v, %v; want ErrBadInput", tt.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	got, _ := ParseSizes("2^0..2^25")
	if !slices.Equal(got, PaperSizes()) || len(got) != 26 || got[25] != 1<<25 {
		t.Errorf("paper grid: %v", got)
	}
}

func TestParseTask(t *testing.T) {
	tests := []struct {
		in      string
		i, n    int
		wantErr bool
	}{
		{"0/1", 0, 1, false},
		{"3/8", 3, 8, false},
		{"8/8", 0, 0, true},
		{"-1/8", 0, 0, true},
		{"1/0", 0, 0, true},
		{"1", 0, 0, true},
		{"a/b", 0, 0, true},
	}
	for _, tt := range tests {
		i, n, err := ParseTask(tt.in)
		if (err != nil) != tt.wantErr || i != tt.i || n != tt.n {
			t.Errorf("ParseTask(%q) = %d, %d, %v", tt.in, i, n, err)
		}
	}
}
