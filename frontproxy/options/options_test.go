package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := []string{"--root-directory", dir, "--root-kubeconfig", file, "--shard-client-cert-file", file, "--shard-client-key-file", file, "--shard-ca-file", file}
	tests := []struct {
		name string
		args []string
		errs []string
	}{
		{"valid", valid, nil},
		{"nothing given", []string{"--root-directory", dir}, []string{"--root-kubeconfig is required", "--shard-client-cert-file is required", "--shard-client-key-file is required", "--shard-ca-file is required"}},
		{"missing files", append(append([]string{}, valid...), "--client-ca-file", file+".missing", "--mapping-file", file+".missing"), []string{"--client-ca-file", "--mapping-file"}},
		{"cache bounds", append(append([]string{}, valid...), "--resolution-cache-size", "0", "--resolution-cache-ttl", "0s"), []string{"--resolution-cache-size", "--resolution-cache-ttl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlagsTo(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			completed, err := o.Complete()
			if err != nil {
				t.Fatal(err)
			}
			errs := completed.Validate()
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors %v, want %d about %v", errs, len(tt.errs), tt.errs)
			}
			for _, want := range tt.errs {
				found := false
				for _, err := range errs {
					found = found || strings.Contains(err.Error(), want)
				}
				if !found {
					t.Errorf("no error about %q in %v", want, errs)
				}
			}
			if tt.errs == nil {
				if _, err := os.Stat(filepath.Join(dir, "certs", "front-proxy.crt")); err != nil {
					t.Errorf("no self-signed serving certificate: %v", err)
				}
			}
		})
	}
}
