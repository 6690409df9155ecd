package certscmd

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
)

func parseCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatal("no PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSecretsAreCreatedKeptAndRenewed(t *testing.T) {
	kube := fake.NewClientset()
	sec := kube.CoreV1().Secrets("tessera")
	owner := &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "tessera-certificates", UID: "u1"}
	s := &secrets{kube: sec, labels: map[string]string{"app.kubernetes.io/instance": "t"}, owner: owner}
	o := &Options{CASecret: "t-ca",
		Serving:     []string{"t-proxy-tls=t-front-proxy,tessera.example.com,192.0.2.7"},
		Clients:     []string{"t-admin=kcp-admin:system:kcp:admin", "t-proxy-client=front-proxy"},
		Kubeconfigs: []string{"t-admin-kubeconfig=t-admin@https://tessera.example.com:6443"}}
	ss, cs, ks, err := o.parse()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.reconcile(t.Context(), t.TempDir(), o.CASecret, ss, cs, ks); err != nil {
		t.Fatal(err)
	}
	get := func(name string) *corev1.Secret {
		t.Helper()
		x, err := sec.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	ca := parseCert(t, get("t-ca").Data[KeyCert])
	if !ca.IsCA {
		t.Fatal("t-ca holds no CA")
	}
	proxy := get("t-proxy-tls")
	if proxy.Type != corev1.SecretTypeTLS || len(proxy.OwnerReferences) != 1 || proxy.Labels["app.kubernetes.io/instance"] != "t" {
		t.Errorf("serving Secret: type %s, owners %v, labels %v", proxy.Type, proxy.OwnerReferences, proxy.Labels)
	}
	pc := parseCert(t, proxy.Data[KeyCert])
	for _, h := range []string{"t-front-proxy", "tessera.example.com", "192.0.2.7"} {
		if err := pc.VerifyHostname(h); err != nil {
			t.Errorf("serving certificate: %v", err)
		}
	}
	if err := pc.CheckSignatureFrom(ca); err != nil {
		t.Errorf("serving certificate not signed by the CA: %v", err)
	}
	admin := parseCert(t, get("t-admin").Data[KeyCert])
	if admin.Subject.CommonName != "kcp-admin" || strings.Join(admin.Subject.Organization, ",") != "system:kcp:admin" {
		t.Errorf("admin certificate subject %v", admin.Subject)
	}
	if len(parseCert(t, get("t-proxy-client").Data[KeyCert]).Subject.Organization) != 0 {
		t.Error("a client without groups got groups")
	}
	kc, err := clientcmd.Load(get("t-admin-kubeconfig").Data[KeyKubeconfig])
	if err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != "root" || kc.Clusters["root"].Server != "https://tessera.example.com:6443/clusters/root" || kc.Clusters["base"].Server != "https://tessera.example.com:6443" {
		t.Errorf("kubeconfig contexts: current %s, clusters %v", kc.CurrentContext, kc.Clusters)
	}
	if string(kc.AuthInfos["admin"].ClientCertificateData) != string(get("t-admin").Data[KeyCert]) {
		t.Error("the kubeconfig does not carry the admin client certificate")
	}

	// A second run keeps everything.
	before := map[string]string{}
	for _, n := range []string{"t-ca", "t-proxy-tls", "t-admin", "t-proxy-client", "t-admin-kubeconfig"} {
		before[n] = get(n).ResourceVersion + string(get(n).Data[KeyCert])
	}
	if err := s.reconcile(t.Context(), t.TempDir(), o.CASecret, ss, cs, ks); err != nil {
		t.Fatal(err)
	}
	for n, b := range before {
		if got := get(n).ResourceVersion + string(get(n).Data[KeyCert]); got != b {
			t.Errorf("a second run changed Secret %s", n)
		}
	}

	// Another host name renews the serving certificate, with the same CA.
	o.Serving = []string{"t-proxy-tls=t-front-proxy,other.example.com"}
	ss, cs, ks, _ = o.parse()
	if err := s.reconcile(t.Context(), t.TempDir(), o.CASecret, ss, cs, ks); err != nil {
		t.Fatal(err)
	}
	renewed := parseCert(t, get("t-proxy-tls").Data[KeyCert])
	if renewed.VerifyHostname("other.example.com") != nil || renewed.CheckSignatureFrom(ca) != nil {
		t.Error("the serving certificate was not renewed for the new host by the same CA")
	}
	if string(get("t-admin").Data[KeyCert]) != before["t-admin"][len(get("t-admin").ResourceVersion):] {
		t.Error("renewing one certificate changed another")
	}
}

func TestAGivenCAIsUsedAndMustHoldAKey(t *testing.T) {
	kube := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns"}, Data: map[string][]byte{KeyCert: []byte("x")}})
	s := &secrets{kube: kube.CoreV1().Secrets("ns")}
	err := s.reconcile(t.Context(), t.TempDir(), "mine", nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "holds no CA") {
		t.Errorf("a CA Secret without a key was taken: %v", err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, o := range []Options{
		{},
		{CASecret: "ca", Serving: []string{"nohosts"}},
		{CASecret: "ca", Clients: []string{"x="}},
		{CASecret: "ca", Clients: []string{"c=u"}, Kubeconfigs: []string{"k=c@http://h"}},
	} {
		if _, _, _, err := o.parse(); err == nil {
			t.Errorf("%+v was taken", o)
		}
	}
}

// A kubeconfig of a client certificate someone else issues (cert-manager)
// waits for its Secret and takes it as it is.
func TestKubeconfigOfAnIssuedClientCertificate(t *testing.T) {
	kube := fake.NewClientset()
	sec := kube.CoreV1().Secrets("ns")
	s := &secrets{kube: sec, waitFor: 3 * time.Second}
	o := &Options{CASecret: "ca", Kubeconfigs: []string{"kc=issued@https://proxy:443"}}
	ss, cs, ks, err := o.parse()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.reconcile(t.Context(), t.TempDir(), o.CASecret, ss, cs, ks); err == nil || !strings.Contains(err.Error(), "waiting for Secret issued") {
		t.Fatalf("no error while the client Secret is missing: %v", err)
	}
	if _, err := sec.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "issued"}, Data: map[string][]byte{KeyCert: []byte("CERT"), KeyKey: []byte("KEY")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.reconcile(t.Context(), t.TempDir(), o.CASecret, ss, cs, ks); err != nil {
		t.Fatal(err)
	}
	got, err := sec.Get(t.Context(), "kc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(got.Data[KeyKubeconfig])
	if err != nil {
		t.Fatal(err)
	}
	if string(kc.AuthInfos["admin"].ClientCertificateData) != "CERT" || kc.Clusters["base"].Server != "https://proxy:443" {
		t.Errorf("kubeconfig %+v", kc)
	}
}
