package procmem

import (
	"os"
	"runtime"
	"testing"
)

// The peak covers memory this process touched, and does not fall when it
// is released.
func TestPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is Linux's")
	}
	before := PeakRSS()
	if before <= 0 {
		t.Fatalf("PeakRSS %d on Linux", before)
	}
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	during := PeakRSS()
	runtime.KeepAlive(b)
	if during < before+60<<20 {
		t.Errorf("PeakRSS %d MiB after touching 64 MiB, was %d MiB", during>>20, before>>20)
	}
	b = nil
	runtime.GC()
	if after := PeakRSS(); after < during {
		t.Errorf("PeakRSS fell from %d to %d MiB", during>>20, after>>20)
	}
}

// Available is positive on Linux and at most the machine's memory.
func TestAvailable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MemAvailable is Linux's")
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	total := meminfoField(string(b), "MemTotal:")
	if a := Available(); a <= 0 || a > total {
		t.Errorf("Available %d, MemTotal %d", a, total)
	}
}

func TestMeminfoField(t *testing.T) {
	m := "MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20000000 kB\n"
	if v := meminfoField(m, "MemAvailable:"); v != 20000000*1024 {
		t.Errorf("MemAvailable %d", v)
	}
	if v := meminfoField(m, "Missing:"); v != 0 {
		t.Errorf("missing field %d", v)
	}
}
