package fileutil

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestWriteFileNeverShowsAPart reads the file while it is rewritten with
// contents of different lengths: every read is one of the whole contents.
func TestWriteFileNeverShowsAPart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "admin.kubeconfig")
	contents := [][]byte{bytes.Repeat([]byte("a"), 1<<20), bytes.Repeat([]byte("b"), 3<<20)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			if err := WriteFile(path, contents[i%2], 0o600); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for reads := 0; ; reads++ {
		select {
		case <-done:
			if reads == 0 {
				t.Fatal("no read happened while the file was written")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("temporary files left behind: %v", entries)
			}
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode of the file: %v, %v", fi, err)
			}
			return
		default:
		}
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, contents[0]) && !bytes.Equal(b, contents[1]) {
			t.Fatalf("read %d bytes, a part of a write", len(b))
		}
	}
}
