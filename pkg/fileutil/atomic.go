// Package fileutil writes files that other processes wait for.
package fileutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path so that a reader sees either the old file
// (or none) or all of data, never a part: the data goes to a temporary file
// in the same directory, is synced, and is renamed over path. A script or
// test that waits for a kubeconfig to appear therefore never reads half of
// one.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer func() { _ = os.Remove(name) }()
	if err := tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return os.Rename(name, path)
}
