package tracefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadEvents(t *testing.T) {
	p := filepath.Join(t.TempDir(), EventsName)
	body := `{"time":"2026-11-23T10:00:00Z","node":1,"epoch":2,"event":"reassign","left":[0],"hosts_moved":3,"hosts_in":["a.test"]}` + "\n" +
		`{"time":"2026-11-23T10:00:01Z","node":1,"epoch":2,"event":"stop","reason":"done"}` + "\n"
	os.WriteFile(p, []byte(body), 0o644)
	evs, err := ReadEvents(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Event != EventReassign || evs[0].HostsMoved != 3 || len(evs[0].HostsIn) != 1 || evs[1].Reason != "done" {
		t.Errorf("events %+v", evs)
	}
	// A last line cut by a crash.
	os.WriteFile(p, []byte(body+`{"time":"2026-11-23T10:`), 0o644)
	if _, err := ReadEvents(p); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p+" line 3") {
		t.Errorf("cut line: %v", err)
	}
}
