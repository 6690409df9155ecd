package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlagsAndValidation(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		errs []string
	}{
		"defaults need a kubeconfig": {nil, []string{"--kubeconfig is required"}},
		"kubeconfig":                 {[]string{"--kubeconfig", kubeconfig}, nil},
		"missing files": {[]string{"--kubeconfig", kubeconfig + ".missing", "--client-ca-file", "/nonexistent/ca.crt"},
			[]string{"--kubeconfig: stat", "--client-ca-file: stat"}},
		"tls pair": {[]string{"--kubeconfig", kubeconfig, "--tls-cert-file", kubeconfig}, []string{"--tls-cert-file and --tls-private-key-file go together"}},
		"allowed names without a request-header CA": {[]string{"--kubeconfig", kubeconfig, "--requestheader-allowed-names", "front-proxy"},
			[]string{"--requestheader-allowed-names requires --requestheader-client-ca-file"}},
		"bad port and cache": {[]string{"--kubeconfig", kubeconfig, "--secure-port", "70000", "--authorization-cache-size", "0"},
			[]string{"--secure-port 70000 is out of range", "--authorization-cache-size 0 must be at least 1"}},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlagsTo(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			c, err := o.Complete()
			if err != nil {
				t.Fatal(err)
			}
			errs := c.Validate()
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			joined := strings.Join(got, "\n")
			if len(errs) != len(tc.errs) {
				t.Fatalf("got errors %q, want %d: %q", got, len(tc.errs), tc.errs)
			}
			for _, want := range tc.errs {
				if !strings.Contains(joined, want) {
					t.Errorf("errors %q lack %q", got, want)
				}
			}
		})
	}
}

func TestCompleteDefaults(t *testing.T) {
	o := NewOptions()
	o.BindAddress = "0.0.0.0"
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(c.RootDirectory) || c.ExternalHostname != "127.0.0.1" || c.SecurePort != DefaultSecurePort {
		t.Errorf("completed: root %q, host %q, port %d", c.RootDirectory, c.ExternalHostname, c.SecurePort)
	}
	if o.ExternalHostname != "" {
		t.Error("Complete changed the options it was called on")
	}
}
