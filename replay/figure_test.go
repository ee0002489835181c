package replay

import (
	"os"
	"regexp"
	"testing"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// The notebooks draw each policy and partitioner as the Go figures do:
// notebooks/setup.py's SERIES_STYLES and INDEX_STYLES are this package's
// namedStyles and indexStyles.
func TestNotebookStylesMatch(t *testing.T) {
	b, err := os.ReadFile("../notebooks/setup.py")
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`"([\w-]+)": \("(#[0-9A-F]{6})", "(.)", "([-.:]+)"\)`)
	got := map[string]seriesStyle{}
	for _, m := range entry.FindAllStringSubmatch(string(b), -1) {
		got[m[1]] = seriesStyle{m[2], m[3], m[4]}
	}
	for name, want := range namedStyles {
		if got[name] != want {
			t.Errorf("setup.py styles %s as %v, the Go figures as %v", name, got[name], want)
		}
		delete(got, name)
	}
	for name := range got {
		t.Errorf("setup.py styles %s, the Go figures do not", name)
	}
	index := regexp.MustCompile(`\("(#[0-9A-F]{6})", "(.)", "([-.:]+)"\)`)
	list := regexp.MustCompile(`(?s)INDEX_STYLES = \[(.*?)\]\n`).FindSubmatch(b)
	if list == nil {
		t.Fatal("setup.py: no INDEX_STYLES")
	}
	var idx []seriesStyle
	for _, m := range index.FindAllStringSubmatch(string(list[1]), -1) {
		idx = append(idx, seriesStyle{m[1], m[2], m[3]})
	}
	if len(idx) != len(indexStyles) {
		t.Fatalf("setup.py has %d INDEX_STYLES, the Go figures %d", len(idx), len(indexStyles))
	}
	for i := range idx {
		if idx[i] != indexStyles[i] {
			t.Errorf("INDEX_STYLES[%d]: setup.py %v, Go %v", i, idx[i], indexStyles[i])
		}
	}
}

// Every policy has a style, and no two look alike: colour and marker
// differ.
func TestPolicyStylesDistinct(t *testing.T) {
	seen := map[[2]string]string{}
	for _, p := range policy.Names() {
		st, ok := namedStyles[p]
		if !ok {
			t.Errorf("%s has no style", p)
			continue
		}
		k := [2]string{st.color, st.marker}
		if q, ok := seen[k]; ok {
			t.Errorf("%s and %s are both %v", p, q, k)
		}
		seen[k] = p
	}
}
