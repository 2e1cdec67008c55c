// Package atomicfile writes files so that a failed write never loses the
// file it was to replace: the new content goes to a temporary file in the
// same directory, which is renamed over the target only once it is
// complete.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

var counter atomic.Int64

// Write calls write with a buffered writer and installs what it wrote as
// path. A regular file (or a symbolic link to one) is replaced by rename
// on success, keeping the replaced file's permissions; on any failure
// (write's error, a short write such as a full disk or a file size limit)
// the temporary file is removed, the old file is left as it was, and the
// error says so. A target that exists and is not a regular file (a
// device such as /dev/null, a named pipe) is written directly: there is
// nothing to replace and a rename would put a file in its place.
func Write(path string, write func(w io.Writer) error) error {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	info, statErr := os.Stat(target)
	if statErr == nil && !info.Mode().IsRegular() {
		if info.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		return writeDirect(path, target, write)
	}
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return statErr
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	err = fill(f, write)
	if err == nil && info != nil {
		err = f.Chmod(info.Mode().Perm())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == tmp {
			// The temporary file is an implementation detail.
			pe.Path = path
		}
		if info != nil {
			return fmt.Errorf("%v (%s is left as it was)", err, path)
		}
		return err
	}
	return nil
}

// WriteFile is os.WriteFile made atomic by Write.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CheckTarget reports, before anything is computed, whether path can be
// written: its directory exists and it is not a directory itself.
func CheckTarget(path string) error {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	return nil
}

// createTemp creates a new file next to the target. Unlike os.CreateTemp
// it asks for mode 0666, so the umask decides a new file's permissions as
// it would for os.Create.
func createTemp(dir, base string) (*os.File, string, error) {
	for {
		name := filepath.Join(dir, "."+base+".tmp"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(counter.Add(1), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
}

func writeDirect(path, target string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	err = fill(f, write)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func fill(f *os.File, write func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}
