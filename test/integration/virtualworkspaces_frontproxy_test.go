package integration

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/keyutil"

	fpoptions "github.com/tessera-dev/tessera/frontproxy/options"
	fpserver "github.com/tessera-dev/tessera/frontproxy/server"
	"github.com/tessera-dev/tessera/test/integration/framework"
	vwoptions "github.com/tessera-dev/tessera/virtual/options"
)

// writeClientCert writes a client certificate for cn signed by the CA and
// its key to files.
func (s *signer) writeClientCert(t *testing.T, cn string) (certFile, keyFile string) {
	t.Helper()
	c := s.clientCert(t, cn)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := keyutil.MarshalPrivateKeyToPEM(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestStandaloneVirtualWorkspacesBehindFrontProxy routes /services/ of a
// front-proxy to the standalone virtual workspaces with a kcp-format
// mapping file: the proxy authenticates users by client certificate and
// asserts them in request headers with its own client certificate, which
// the virtual workspaces believe; a bearer token is passed on and reviewed
// by the shard.
func TestStandaloneVirtualWorkspacesBehindFrontProxy(t *testing.T) {
	proxyCA, users := newSigner(t, "front-proxy-clients"), newSigner(t, "users")
	proxyCAFile := proxyCA.writeCA(t)
	s := framework.StartShard(t, withTokens(t, vwTokens...), framework.WithRequestHeader(proxyCAFile, "front-proxy"))
	provider, consumer := exportCowboysForVW(t, s)
	vw := startVirtualWorkspaces(t, s, func(o *vwoptions.Options) {
		o.RequestHeader.ClientCAFile = proxyCAFile
		o.RequestHeader.AllowedNames = []string{"front-proxy"}
	})

	proxyCert, proxyKey := proxyCA.writeClientCert(t, "front-proxy")
	var mapping strings.Builder
	for _, p := range []string{"/services/apiexport", "/services/initializingworkspaces"} {
		fmt.Fprintf(&mapping, "- path: %s\n  backend: %s\n  backend_server_ca: %s\n  proxy_client_cert: %s\n  proxy_client_key: %s\n",
			p, vw.URL, vw.CAFile, proxyCert, proxyKey)
	}
	o := fpoptions.NewOptions()
	o.RootDirectory = t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.SecureServing.Listener = ln
	o.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	o.ClientCAFile = users.writeCA(t)
	o.RootKubeconfig, o.RootKubeconfigContext = s.Kubeconfig, "shard-base"
	o.ShardClientCertFile, o.ShardClientKeyFile = proxyCert, proxyKey
	o.ShardCAFile = filepath.Join(s.Options.RootDirectory, "certs", "ca.crt")
	o.MappingFile = yamlFile(t, "mapping.yaml", mapping.String())
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if errs := completed.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	cfg, err := fpserver.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	fp := cfg.Complete().New()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fp.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Errorf("the front-proxy did not stop")
		}
	})
	proxyServingCA := filepath.Join(o.RootDirectory, "certs", "front-proxy.crt")
	fpVW := &standaloneVW{URL: fp.URL(), CAFile: proxyServingCA}
	eventually(t, time.Minute, "the front-proxy's /readyz", func(ctx context.Context) (bool, error) {
		code, body := get(ctx, fpVW.httpClient(t, nil), fp.URL()+"/readyz", nil)
		return code == http.StatusOK, fmt.Errorf("%d %s", code, body)
	})

	exportPath := "/services/apiexport/" + string(provider) + "/wildwest.dev/clusters/*"
	url := fp.URL() + exportPath + "/apis/wildwest.dev/v1alpha1/cowboys"
	readerCert := users.clientCert(t, "reader")
	if code, body := get(t.Context(), fpVW.httpClient(t, &readerCert), url, nil); code != http.StatusOK || !strings.Contains(body, `"name":"one"`) || !strings.Contains(body, string(consumer)) {
		t.Errorf("reader's client certificate through the front-proxy: %d %s", code, body)
	}
	nobodyCert := users.clientCert(t, "nobody")
	if code, body := get(t.Context(), fpVW.httpClient(t, &nobodyCert), url, nil); code != http.StatusForbidden {
		t.Errorf("nobody's client certificate through the front-proxy: %d %s, want 403", code, body)
	}
	// Identity headers of clients are not believed.
	if code, body := get(t.Context(), fpVW.httpClient(t, &nobodyCert), url, http.Header{"X-Remote-User": {"reader"}}); code != http.StatusForbidden {
		t.Errorf("nobody claiming to be reader through the front-proxy: %d %s, want 403", code, body)
	}

	dyn, err := dynamic.NewForConfig(fpVW.tokenConfig(exportPath, "reader-token"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil || strings.Join(names(list.Items), ",") != "one" {
		t.Errorf("reader's token through the front-proxy: %v %v", err, list)
	}
	dyn, err = dynamic.NewForConfig(fpVW.tokenConfig(exportPath, "nobody-token"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(cowboysGVR).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("nobody's token through the front-proxy: got %v, want 403", err)
	}
}
