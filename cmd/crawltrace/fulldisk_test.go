package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/sampledata"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// smallDisk mounts a real ext4 file system of size bytes (a loop device
// over an image file) and returns its mount point, unmounted at the end
// of the test. It needs root, mkfs.ext4 and loop devices: without them
// the test is skipped, or fails under CI=true.
func smallDisk(t *testing.T, size int64) string {
	t.Helper()
	skip := func(why string, args ...any) {
		t.Helper()
		if sampledata.InCI() && os.Geteuid() == 0 {
			t.Fatalf("small disk: "+why, args...)
		}
		t.Skipf("small disk: "+why, args...)
	}
	if os.Geteuid() != 0 {
		skip("needs root to mount a file system")
	}
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		skip("no mkfs.ext4 (Debian: e2fsprogs)")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-F", "-O", "^has_journal", img).CombinedOutput(); err != nil {
		skip("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		skip("mount: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}

// A condense whose output disk fills up stops with a one-line error
// naming the file and the cause, exit status 1, and leaves no partial
// trace: every trace it did finish reads back whole. The traces are
// written past the page cache where the file system allows it (ext4
// does), so this is the direct writes' failure path on a real device.
func TestCondenseFullDisk(t *testing.T) {
	mnt := smallDisk(t, 2<<20)
	dir := t.TempDir()
	urls := filepath.Join(dir, "urls.txt")
	f, err := os.Create(urls)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range 300000 {
		fmt.Fprintf(w, "http://h%d.test/p/%d\n", i%50, i%40000)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	crawl := filepath.Join(dir, "crawl")
	if code, _, errs := runCLI(t, "import", "urls", urls, "--nodes", "2", "-o", crawl); code != 0 {
		t.Fatalf("import: %d: %s", code, errs)
	}
	out := filepath.Join(mnt, "out")
	code, _, errs := runCLI(t, "condense", crawl, "-o", out, "--progress", "never")
	if code != 1 {
		t.Fatalf("condense onto a full disk: exit %d, want 1; stderr:\n%s", code, errs)
	}
	msg := strings.TrimSpace(errs)
	t.Logf("condense: %s", msg)
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, mnt) {
		t.Errorf("want one line naming a file under %s and the cause; got:\n%s", mnt, errs)
	}
	ents, err := os.ReadDir(out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(out, e.Name())
		switch {
		case strings.HasSuffix(e.Name(), ".tmp"):
			t.Errorf("partial trace left: %s", p)
		case strings.HasSuffix(e.Name(), ".arrow"):
			if _, _, err := tracefile.ReadCondensedAll(p); err != nil {
				t.Errorf("a finished trace does not read back: %v", err)
			}
		}
	}
}
