// Command images builds one OCI image per static binary without a container
// engine, a registry or a base image, as `make images` does:
//
//	go run ./hack/images -output-dir bin/images -repository ghcr.io/tessera-dev -tag v0.1.0 \
//	    tessera=bin/linux-amd64/tessera tessera-front-proxy=bin/linux-amd64/tessera-front-proxy
//
// Each image has one layer: the binary at /usr/local/bin/<name> (the
// entrypoint), /etc/passwd and /etc/group naming the non-root user 65532
// ("nonroot") it runs as, its home /home/nonroot (the working directory) and
// /tmp. Times are fixed, so the same binary gives the same image digest.
//
// Without -push, each image is written to <output-dir>/<name>.tar in the
// format of `docker save` (manifest.json and a config), which `docker load`,
// `kind load image-archive` and `ctr images import` take. With -push, each
// image goes to <repository>/<name>:<tag> in a registry, with the
// credentials of ~/.docker/config.json.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The user the images run as: not root, and the number distroless uses, so
// that securityContexts written for those images fit ours too.
const (
	uid  = 65532
	user = "nonroot"
	home = "/home/nonroot"
)

// epoch is the time of every file and of the image: images are
// reproducible.
var epoch = time.Unix(0, 0).UTC()

func main() {
	outDir := flag.String("output-dir", "bin/images", "Directory the image tarballs are written to.")
	repository := flag.String("repository", "ghcr.io/tessera-dev", "Repository the images are named in: <repository>/<name>:<tag>.")
	tag := flag.String("tag", "latest", "Tag of the images.")
	arch := flag.String("arch", runtime.GOARCH, "Architecture of the binaries.")
	push := flag.Bool("push", false, "Push the images to their repository instead of writing tarballs.")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: %s [flags] name=binary...\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	for _, arg := range flag.Args() {
		n, bin, ok := strings.Cut(arg, "=")
		if !ok || n == "" || bin == "" {
			fmt.Fprintf(os.Stderr, "images: %q is not name=binary\n", arg)
			os.Exit(2)
		}
		ref, err := name.NewTag(fmt.Sprintf("%s/%s:%s", *repository, n, *tag))
		if err != nil {
			fail(err)
		}
		img, err := Build(n, bin, *arch, *tag)
		if err != nil {
			fail(err)
		}
		if *push {
			if err := remote.Write(ref, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
				fail(fmt.Errorf("pushing %s: %w", ref, err))
			}
			fmt.Printf("pushed %s\n", ref)
			continue
		}
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			fail(err)
		}
		out := filepath.Join(*outDir, n+".tar")
		if err := tarball.WriteToFile(out, ref, img); err != nil {
			fail(fmt.Errorf("writing %s: %w", out, err))
		}
		digest, err := img.Digest()
		if err != nil {
			fail(err)
		}
		fmt.Printf("%s %s %s\n", out, ref, digest)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "images: %v\n", err)
	os.Exit(1)
}

// Build returns the image of one binary, run as /usr/local/bin/<name>.
func Build(name, binary, arch, version string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	if err := checkStatic(data); err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	layerTar, err := layer(name, data)
	if err != nil {
		return nil, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS = "linux"
	cfg.Architecture = arch
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = []string{"/usr/local/bin/" + name}
	cfg.Config.User = fmt.Sprintf("%d:%d", uid, uid)
	cfg.Config.WorkingDir = home
	cfg.Config.Env = []string{"PATH=/usr/local/bin", "HOME=" + home}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   name,
		"org.opencontainers.image.version": version,
		"org.opencontainers.image.source":  "https://github.com/tessera-dev/tessera",
	}
	return mutate.ConfigFile(img, cfg)
}

// layer returns the tar of the image's only layer.
func layer(name string, binary []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(path string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: path + "/", Mode: mode, Uid: owner, Gid: owner, ModTime: epoch})
	}
	file := func(path string, mode int64, content []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path, Mode: mode, Size: int64(len(content)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := tw.Write(content)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", user, uid, uid, user, home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", user, uid)
	for _, step := range []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir(strings.TrimPrefix(home, "/"), 0o700, uid) },
		func() error { return dir("tmp", 0o1777, 0) },
		func() error { return dir("usr", 0o755, 0) },
		func() error { return dir("usr/local", 0o755, 0) },
		func() error { return dir("usr/local/bin", 0o755, 0) },
		func() error { return file("usr/local/bin/"+name, 0o755, binary) },
		tw.Close,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// checkStatic refuses binaries that need a dynamic loader: the image has
// none.
func checkStatic(b []byte) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("not an ELF binary: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("dynamically linked (build it with CGO_ENABLED=0)")
		}
	}
	return nil
}
