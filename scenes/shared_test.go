package scenes

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// sharedDir locates ../shared beside the module root (the folder holding
// go.mod), skipping the test when it is absent.
func sharedDir(tb testing.TB) string {
	tb.Helper()
	dir, err := findShared()
	if err != nil {
		tb.Skip(err)
	}
	return dir
}

func findShared() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root not found")
		}
		dir = parent
	}
	shared := filepath.Join(filepath.Dir(dir), "shared")
	if fi, err := os.Stat(shared); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s absent", shared)
	}
	return shared, nil
}

func gunzip(data []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return data
	}
	out, _ := io.ReadAll(zr)
	return out
}
