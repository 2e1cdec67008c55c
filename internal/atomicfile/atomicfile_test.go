package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplacesOnlyOnSuccess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(path, []byte("precious\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "half a fi")
		return errors.New("the writer failed")
	})
	if err == nil || !strings.Contains(err.Error(), "keep.txt is left as it was") {
		t.Errorf("failed write: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious\n" {
		t.Errorf("a failed write left %q", b)
	}
	if err := WriteFile(path, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if b, _ := os.ReadFile(path); err != nil || string(b) != "new\n" || info.Mode().Perm() != 0o640 {
		t.Errorf("after a write: %q, mode %v (%v); want \"new\\n\", the replaced file's -rw-r-----", b, info.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}

// TestShortWriteKeepsTheOldFile: a file size limit (ulimit -f) cuts the
// write short; the target keeps its old content and the error names it,
// not the temporary file.
func TestShortWriteKeepsTheOldFile(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(path, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = 4096
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	err := WriteFile(path, make([]byte, 1<<20))
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	if err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), path) {
		t.Errorf("short write: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious\n" {
		t.Errorf("a short write left %d bytes", len(b))
	}
}

func TestWriteDevicesAndLinks(t *testing.T) {
	if err := WriteFile(os.DevNull, []byte("gone\n")); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if info, err := os.Stat(os.DevNull); err != nil || info.Mode().IsRegular() {
		t.Fatalf("%s was replaced by a file", os.DevNull)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target.txt")
	link := filepath.Join(dir, "link.txt")
	os.WriteFile(target, []byte("old\n"), 0o644)
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if err := WriteFile(link, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(target); string(b) != "new\n" {
		t.Errorf("the link's target holds %q", b)
	}
	if err := WriteFile(dir, []byte("x")); err == nil {
		t.Error("a directory was written")
	}
	if err := CheckTarget(filepath.Join(dir, "no", "such.txt")); err == nil {
		t.Error("a file in a missing directory passes CheckTarget")
	}
}
