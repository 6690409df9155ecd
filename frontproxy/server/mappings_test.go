package server_test

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/frontproxy/server"
)

// TestLoadMappings reads a mapping file in kcp's format: its /services/
// entries are routed, the /clusters/ and / entries kcp needs are skipped.
func TestLoadMappings(t *testing.T) {
	ca := newSigner(t, "backends")
	cert, key := ca.files(t, "client", "front-proxy", nil, x509.ExtKeyUsageClientAuth)
	caFile := ca.caFile(t)
	write := func(t *testing.T, content string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "mapping.yaml")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	entry := func(path, backend string) string {
		return "- path: " + path + "\n  backend: " + backend + "\n  backend_server_ca: " + caFile +
			"\n  proxy_client_cert: " + cert + "\n  proxy_client_key: " + key + "\n"
	}

	t.Run("kcp's file", func(t *testing.T) {
		file := write(t, entry("/services/", "https://vw.example:6444")+
			entry("/services/apiexport/", "https://apiexport.example:6445")+
			"  user_header: X-User\n  group_header: X-Groups\n  extra_header_prefix: X-Extra-\n"+
			entry("/clusters/", "https://shard.example:6443")+
			entry("/", "https://shard.example:6443"))
		got, err := server.LoadMappings(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%d mappings, want the 2 /services/ ones: %+v", len(got), got)
		}
		if got[0].Prefix != "/services/" || got[0].Backend.Host != "vw.example:6444" {
			t.Errorf("first mapping %+v", got[0])
		}
		if h := got[1].Headers; h.User != "X-User" || h.Group != "X-Groups" || h.ExtraPrefix != "X-Extra-" {
			t.Errorf("headers of the second mapping %+v", h)
		}
	})

	for name, tc := range map[string]struct{ content, err string }{
		"a backend that is not https":  {entry("/services/", "http://vw.example"), "not an absolute https URL"},
		"a missing client certificate": {strings.Replace(entry("/services/", "https://vw.example"), cert, cert+".missing", 1), "client certificate"},
		"not a list":                   {"path: /services/\n", "cannot unmarshal"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := server.LoadMappings(write(t, tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one about %q", err, tc.err)
			}
		})
	}
}
