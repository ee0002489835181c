// Package figtest checks rendered figures as a reviewer would: nothing
// clipped at the canvas's edge, and one colour per named series across
// figures. It is used by tests only.
package figtest

import (
	"fmt"
	"image"
	"image/color"
	_ "image/png" // PNG decoder
	"os"
	"regexp"
	"strings"
)

// BlankBorder returns an error naming the first pixel within px pixels of
// the edge of the PNG at path that is not the background (white): a
// legend, label or marker running into the edge, where it is clipped.
func BlankBorder(path string, px int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if x >= b.Min.X+px && x < b.Max.X-px && y >= b.Min.Y+px && y < b.Max.Y-px {
				x = b.Max.X - px - 1
				continue
			}
			if r, g, bl, _ := img.At(x, y).RGBA(); r != 0xffff || g != 0xffff || bl != 0xffff {
				return fmt.Errorf("%s (%dx%d): pixel (%d,%d) within %d px of the edge is drawn (%v)",
					path, b.Dx(), b.Dy(), x, y, px, color.RGBAModel.Convert(img.At(x, y)))
			}
		}
	}
	return nil
}

// legendRE matches a stroked path followed by a text element: in an SVG
// written by gonum/plot, the end of a legend entry's thumbnail (its marker,
// or its line) and its label.
var legendRE = regexp.MustCompile(`<path [^>]*style="[^"]*stroke:(#[0-9A-Fa-f]{6})[^"]*"\s*/>\s*<text [^>]*>([^<]*)</text>`)

// LegendColors returns, for each text label of the SVG figure svg drawn
// right after a stroked path (a legend entry), that path's colour, by
// label. A label's parenthesised note, as in "domain
// (same as host)", is dropped.
func LegendColors(svg string) map[string]string {
	out := map[string]string{}
	for _, m := range legendRE.FindAllStringSubmatch(svg, -1) {
		label, _, _ := strings.Cut(m[2], " (")
		out[label] = strings.ToUpper(m[1])
	}
	return out
}
