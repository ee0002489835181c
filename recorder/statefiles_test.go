package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/fliptest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func isCorrupt(err error) bool { return errors.Is(err, tracefile.ErrCorrupt) }

// savedConfigFile writes the state/config.json of a crawl in a new
// directory and returns the directory and the file's bytes.
func savedConfigFile(t testing.TB) (string, []byte) {
	t.Helper()
	cfg := DefaultConfig()
	// The same bytes in every process (a fuzz worker's too): the saved
	// OutDir is a fixed name, the file goes into a new directory.
	cfg.OutDir = "crawl"
	cfg.CrawlID = "c1"
	cfg.Seeds = []string{"http://a.test/"}
	cfg.MinDelay = 250 * time.Millisecond
	dir := t.TempDir()
	path := filepath.Join(stateDir(dir, 0), configFileName)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := tracefile.WriteSealedJSON(path, savedConfig{Format: ConfigFormat, Created: time.Unix(1700000000, 0).UTC(), Config: cfg}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return dir, b
}

// Issue 32, case 2: every single-bit flip of state/config.json is refused
// by the resume's read of it. Before, 28 of 60 flips were accepted, among
// them "MinDelay" -> "MinDeley", which resumed the crawl with no delay.
func TestConfigEveryBitFlipRefused(t *testing.T) {
	dir, good := savedConfigFile(t)
	sc, err := readSavedConfig(dir, 0)
	if err != nil || sc.Config.CrawlID != "c1" || sc.Config.MinDelay != 250*time.Millisecond {
		t.Fatalf("read back: %+v, %v", sc, err)
	}
	path := filepath.Join(stateDir(dir, 0), configFileName)
	fliptest.EveryBit(t, path, good, fliptest.Stride(len(good)), isCorrupt, func() error {
		_, err := readSavedConfig(dir, 0)
		return err
	})
}

// resealed is config.json b with its lines holding old replaced by new
// and a valid checksum: what only a writer that means it could produce.
func resealed(t *testing.T, b []byte, old, new string) []byte {
	t.Helper()
	i := bytes.LastIndex(b, []byte(",\n  \"checksum\""))
	body := string(b[:i]) + "\n}"
	if !strings.Contains(body, old) {
		t.Fatalf("config.json holds no %q", old)
	}
	var v any
	if err := json.Unmarshal([]byte(strings.Replace(body, old, new, 1)), &v); err != nil {
		t.Fatal(err)
	}
	out, err := tracefile.MarshalSealed(json.RawMessage(strings.Replace(body, old, new, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A config.json that proves itself but lacks a key, or has one this build
// does not know, is refused naming the file and the key: not read as the
// default. So is one without a checksum.
func TestConfigKeysChecked(t *testing.T) {
	dir, good := savedConfigFile(t)
	path := filepath.Join(stateDir(dir, 0), configFileName)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"key missing", resealed(t, good, `    "MinDelay": 250000000,`+"\n", ""), `"config.MinDelay"`},
		{"key unknown", resealed(t, good, `"MinDelay"`, `"MinDeley"`), `"MinDeley"`},
		{"no checksum", good[:bytes.LastIndex(good, []byte(",\n  \"checksum\""))], "no checksum"},
	} {
		if tc.name == "no checksum" {
			tc.data = append(tc.data, "\n}\n"...)
		}
		os.WriteFile(path, tc.data, 0o644)
		_, err := readSavedConfig(dir, 0)
		if !isCorrupt(err) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming the file and %s", tc.name, err, tc.want)
		}
	}
}

// FuzzSavedConfig: any state/config.json is read as the configuration
// its writer wrote or refused with ErrCorrupt, never a panic.
func FuzzSavedConfig(f *testing.F) {
	dir, good := savedConfigFile(f)
	f.Add(good[:len(good)/2])
	path := filepath.Join(stateDir(dir, 0), configFileName)
	fliptest.Fuzz(f, path, good, isCorrupt, func(t *testing.T, data []byte) error {
		_, err := readSavedConfig(dir, 0)
		if err == nil && !bytes.Equal(data, good) {
			t.Fatalf("a changed config.json was accepted:\n%s", data)
		}
		return err
	})
}

// inspect --verify of a crawl without a manifest lists each node's
// checkpoint through its config.json: a damaged one is an error naming
// it, not a node skipped as if it had none.
func TestRecordedSegmentsRefusesDamagedConfig(t *testing.T) {
	dir, good := savedConfigFile(t)
	path := filepath.Join(stateDir(dir, 0), configFileName)
	os.WriteFile(path, bytes.Replace(good, []byte(`"MinDelay"`), []byte(`"MinDeley"`), 1), 0o644)
	if _, err := RecordedSegments(dir); !isCorrupt(err) || !strings.Contains(err.Error(), path) {
		t.Fatalf("RecordedSegments: %v; want an error naming %s", err, path)
	}
}
