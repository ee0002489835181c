package tracefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Sealed JSON is how crawltrace writes the JSON files a crawl is resumed
// or read from (state/config.json, state/topology.json, manifest.json):
// the value as json.MarshalIndent(v, "", "  ") writes it, with one more
// key, last:
//
//	{
//	  "format": "...",
//	  ...
//	  "checksum": "0123456789abcdef"
//	}
//
// checksum is the xxHash64 (16 lowercase hex digits) of the whole file,
// newline at the end included, with those 16 digits written as zeros:
// the rule of a checkpoint's checkpoint.json. A reader
// ([UnmarshalSealed]) checks the checksum, then decodes the rest into
// the value refusing unknown keys, and then requires the file to be
// exactly what this build writes for the value decoded, so a key that
// is missing, repeated or moved is an error too, not a default.

// sealedKey is the checksum's line, before its 16 digits.
const sealedKey = ",\n  \"checksum\": \""

// sealedZero is the checksum's placeholder while the file is hashed.
const sealedZero = "0000000000000000"

// ErrUnsealed marks a JSON file without a checksum: written by a
// crawltrace older than sealed files (see [UnmarshalSealed]).
var ErrUnsealed = errors.New("no checksum")

// MarshalSealed returns v as sealed JSON. v must encode as a JSON
// object with at least one key and without a "checksum" key.
func MarshalSealed(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	if !bytes.HasSuffix(b, []byte("\n}")) {
		return nil, fmt.Errorf("tracefile: sealed JSON of %T: not a JSON object with keys", v)
	}
	out := make([]byte, 0, len(b)+len(sealedKey)+len(sealedZero)+4)
	out = append(out, b[:len(b)-2]...)
	out = append(out, sealedKey...)
	out = append(out, sealedZero...)
	out = append(out, "\"\n}\n"...)
	copy(out[len(out)-4-len(sealedZero):], HashString(xxhash.Sum64(out)))
	return out, nil
}

// WriteSealedJSON writes v as sealed JSON to path, durably: through a
// temporary file, synced, renamed into place, its directory synced.
func WriteSealedJSON(path string, v any) error {
	b, err := MarshalSealed(v)
	if err != nil {
		return err
	}
	return WriteFileDurable(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// UnmarshalSealed checks b, the sealed JSON file read from path, and
// decodes it into v (a pointer). Every error wraps [ErrCorrupt] and
// names path: a checksum that does not match, an unknown key, a key
// missing or out of place, a value of the wrong type. A file with no
// checksum line at all (written before crawltrace sealed its JSON
// files) is decoded refusing unknown keys, and the error also matches
// [ErrUnsealed]; v then holds what the file holds, and a caller that
// accepts such files may use it.
func UnmarshalSealed(path string, b []byte, v any) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrCorrupt, path, fmt.Sprintf(format, args...))
	}
	tail := len(sealedKey) + len(sealedZero) + len("\"\n}\n")
	i := len(b) - tail
	if i < 1 || string(b[i:i+len(sealedKey)]) != sealedKey || string(b[len(b)-4:]) != "\"\n}\n" {
		if bytes.Contains(b, []byte(`"checksum":`)) {
			return bad("its checksum is not on its last line, as crawltrace writes it")
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return bad("%v", err)
		}
		if dec.More() {
			return bad("data after its JSON object")
		}
		return fmt.Errorf("%w: %w: %s: no checksum (written by a crawltrace older than its checksums)", ErrCorrupt, ErrUnsealed, path)
	}
	sum := string(b[i+len(sealedKey) : len(b)-4])
	zeroed := bytes.Clone(b)
	copy(zeroed[i+len(sealedKey):], sealedZero)
	if got := HashString(xxhash.Sum64(zeroed)); got != sum {
		return bad("checksum %s, the file records %q: the file is damaged", got, sum)
	}
	body := append(b[:i:i], "\n}"...)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bad("%v", err)
	}
	want, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return bad("%v", err)
	}
	if !bytes.Equal(want, body) {
		return bad("not as crawltrace writes it: %s", keyDiff(body, want))
	}
	return nil
}

// keyDiff describes how have, a JSON object, differs from want, the same
// object as this build writes it: a key missing (the first, by path), or
// else the first line that differs.
func keyDiff(have, want []byte) string {
	var h, w any
	if json.Unmarshal(have, &h) == nil && json.Unmarshal(want, &w) == nil {
		if k := missingKey(h, w, ""); k != "" {
			return fmt.Sprintf("no key %q", k)
		}
	}
	hl, wl := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(hl), len(wl)) {
		var a, b string
		if i < len(hl) {
			a = strings.TrimSpace(hl[i])
		}
		if i < len(wl) {
			b = strings.TrimSpace(wl[i])
		}
		if a != b {
			return fmt.Sprintf("line %d holds %q, where %q was expected (a key repeated or out of place)", i+1, a, b)
		}
	}
	return "its bytes differ"
}

// missingKey is the path of the first key of want that have lacks.
func missingKey(have, want any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			hv, ok := h[k]
			if !ok {
				return p
			}
			if m := missingKey(hv, w[k], p); m != "" {
				return m
			}
		}
	case []any:
		h, _ := have.([]any)
		for i := range min(len(h), len(w)) {
			if m := missingKey(h[i], w[i], fmt.Sprintf("%s[%d]", path, i)); m != "" {
				return m
			}
		}
	}
	return ""
}
