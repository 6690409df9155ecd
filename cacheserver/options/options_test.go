package options

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCompleteAndValidate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		change     func(*Options)
		wantErrors []string
	}{
		{name: "defaults"},
		{name: "bad bind address", change: func(o *Options) { o.BindAddress = "localhost" }, wantErrors: []string{"--bind-address"}},
		{name: "port out of range", change: func(o *Options) { o.SecurePort = 70000 }, wantErrors: []string{"--secure-port"}},
		{name: "certificate without key", change: func(o *Options) { o.TLSCertFile = "tls.crt" }, wantErrors: []string{"--tls-cert-file"}},
		{name: "etcd certificate without key", change: func(o *Options) { o.EtcdServers = []string{"https://e:2379"}; o.EtcdCertFile = "c" }, wantErrors: []string{"--etcd-certfile"}},
		{name: "embedded etcd port", change: func(o *Options) { o.EmbeddedEtcdClientPort = 0 }, wantErrors: []string{"--embedded-etcd-client-port"}},
		{name: "external etcd ignores embedded ports", change: func(o *Options) { o.EtcdServers = []string{"http://e:2379"}; o.EmbeddedEtcdClientPort = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			if tc.change != nil {
				tc.change(o)
			}
			c, err := o.Complete()
			if err != nil {
				t.Fatal(err)
			}
			errs := c.Validate()
			if len(errs) != len(tc.wantErrors) {
				t.Fatalf("got errors %v, want %d", errs, len(tc.wantErrors))
			}
			for i, want := range tc.wantErrors {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d: got %v, want it to name %s", i, errs[i], want)
				}
			}
		})
	}

	o := NewOptions()
	o.BindAddress = "0.0.0.0"
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(c.RootDirectory) || c.ExternalHostname != "127.0.0.1" {
		t.Errorf("completed: root %q, external hostname %q", c.RootDirectory, c.ExternalHostname)
	}
}
