package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImageOfAStaticBinary builds the image of the pause program, writes it
// as `docker save` does, and reads it back by its tag: entrypoint, user,
// files and the digest of a second build.
func TestImageOfAStaticBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	build := exec.Command("go", "build", "-o", bin, "../pause")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	img, err := Build("pause", bin, "amd64", "v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag("example.com/tessera/pause:v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pause.tar")
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		t.Fatal(err)
	}

	read, err := tarball.ImageFromPath(out, &ref)
	if err != nil {
		t.Fatalf("the tarball has no image %s: %v", ref, err)
	}
	cfg, err := read.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Config.Entrypoint, " "); got != "/usr/local/bin/pause" {
		t.Errorf("entrypoint %q, want /usr/local/bin/pause", got)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want the non-root 65532:65532", cfg.Config.User)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || cfg.Config.Labels["org.opencontainers.image.version"] != "v9.9.9" {
		t.Errorf("platform %s/%s, labels %v", cfg.OS, cfg.Architecture, cfg.Config.Labels)
	}

	layers, err := read.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	contents := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
		if h.Name == "etc/passwd" {
			b, _ := io.ReadAll(tr)
			contents[h.Name] = string(b)
		}
	}
	if h := files["usr/local/bin/pause"]; h == nil || h.Mode&0o111 == 0 {
		t.Errorf("no executable /usr/local/bin/pause in the layer: %v", files)
	}
	if h := files["tmp/"]; h == nil || h.Mode&0o1777 != 0o1777 {
		t.Errorf("no world-writable /tmp in the layer")
	}
	if h := files["home/nonroot/"]; h == nil || h.Uid != 65532 {
		t.Errorf("the home of the user is missing or not its own: %+v", h)
	}
	if !strings.Contains(contents["etc/passwd"], "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd does not name the user: %q", contents["etc/passwd"])
	}

	again, err := Build("pause", bin, "amd64", "v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of one binary differ: %s and %s", d1, d2)
	}
}

func TestDynamicBinariesAreRefused(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Build("script", notELF, "amd64", "v1"); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("a script was taken: %v", err)
	}
	// The machine's own programs are linked dynamically.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	sh, _ = filepath.EvalSymlinks(sh)
	if _, err := Build("sh", sh, "amd64", "v1"); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("%s was taken: %v", sh, err)
	}
}
