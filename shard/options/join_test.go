package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestValidateJoin(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "root.kubeconfig")
	ca, caKey := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	for _, f := range []string{kubeconfig, ca, caKey} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		// wantErr are substrings of the errors, none when empty.
		wantErr []string
		root    bool
	}{
		{name: "defaults: the root shard", root: true},
		{name: "joining shard", args: []string{"--shard-name=shard-1", "--root-shard-kubeconfig-file=" + kubeconfig}},
		{name: "another name without the root kubeconfig", args: []string{"--shard-name=shard-1"}, root: true, wantErr: []string{`--shard-name "shard-1" requires --root-shard-kubeconfig-file`}},
		{name: "root joining root", args: []string{"--root-shard-kubeconfig-file=" + kubeconfig}, wantErr: []string{"needs a --shard-name other than"}},
		{name: "missing root kubeconfig", args: []string{"--shard-name=shard-1", "--root-shard-kubeconfig-file=" + filepath.Join(dir, "none")}, wantErr: []string{"--root-shard-kubeconfig-file: stat"}},
		{name: "first pod of a StatefulSet of all shards: root", args: []string{"--shard-name=t-shard-0", "--root-at-ordinal-zero", "--root-shard-kubeconfig-file=" + kubeconfig}, root: true},
		{name: "another pod of it joins root", args: []string{"--shard-name=t-shard-10", "--root-at-ordinal-zero", "--root-shard-kubeconfig-file=" + kubeconfig}},
		{name: "an ordinal-zero name without the flag joins root", args: []string{"--shard-name=t-shard-0", "--root-shard-kubeconfig-file=" + kubeconfig}},
		{name: "installation CA", args: []string{"--installation-ca-cert-file=" + ca, "--installation-ca-key-file=" + caKey}, root: true},
		{name: "CA without key", args: []string{"--installation-ca-cert-file=" + ca}, root: true, wantErr: []string{"--installation-ca-cert-file and --installation-ca-key-file go together"}},
		{name: "serving key without cert", args: []string{"--tls-private-key-file=" + caKey}, root: true, wantErr: []string{"--tls-cert-file and --tls-private-key-file go together"}},
		{name: "shard client cert without key", args: []string{"--shard-client-cert-file=" + ca}, root: true, wantErr: []string{"--shard-client-cert-file and --shard-client-key-file go together"}},
		{name: "missing CA files", args: []string{"--installation-ca-cert-file=" + filepath.Join(dir, "no.crt"), "--installation-ca-key-file=" + caKey}, root: true, wantErr: []string{"--installation-ca-cert-file: stat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlagsTo(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			c, err := o.Complete()
			if err != nil {
				t.Fatal(err)
			}
			if c.IsRoot() != tt.root {
				t.Errorf("IsRoot() = %v, want %v", c.IsRoot(), tt.root)
			}
			if c.IsRoot() && c.ShardName != RootShardName && len(tt.wantErr) == 0 {
				t.Errorf("the root shard is named %q", c.ShardName)
			}
			errs := c.Validate()
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			all := strings.Join(got, "\n")
			if len(tt.wantErr) == 0 && len(errs) > 0 {
				t.Fatalf("unexpected errors:\n%s", all)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(all, want) {
					t.Errorf("errors do not mention %q:\n%s", want, all)
				}
			}
			if len(errs) != len(tt.wantErr) {
				t.Errorf("got %d errors, want %d:\n%s", len(errs), len(tt.wantErr), all)
			}
		})
	}
}
