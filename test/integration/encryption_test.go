package integration

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/app"
	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// randomKey returns a base64 encoded 32-byte key.
func randomKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// TestEncryptionAtRest: with --encryption-provider-config, Secrets are
// stored aescbc-encrypted and custom resources and CRDs named in the
// configuration secretbox-encrypted, in every logical cluster, while the
// API serves them in clear; ConfigMaps, not named, stay as they are; and a
// logical cluster with encrypted CRDs is deleted to the last key.
func TestEncryptionAtRest(t *testing.T) {
	config := writeFile(t, "encryption.yaml", fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ["secrets"]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: %s
  - identity: {}
- resources: ["gadgets.example.com", "customresourcedefinitions.apiextensions.k8s.io"]
  providers:
  - secretbox:
      keys:
      - name: key2
        secret: %s
`, randomKey(t), randomKey(t)))
	s := framework.StartShard(t, func(o *options.Options) { o.EncryptionProviderConfig = config })
	c := logicalcluster.Name("enc-a")
	createCluster(t, s, c)
	ctx := t.Context()
	client := kube(t, s, c)
	etcdClient := shardEtcd(t, s)
	raw := func(key string) string {
		t.Helper()
		resp, err := etcdClient.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 {
			t.Fatalf("etcd has no key %s", key)
		}
		return string(resp.Kvs[0].Value)
	}
	const (
		aescbc    = "k8s:enc:aescbc:v1:key1:"
		secretbox = "k8s:enc:secretbox:v1:key2:"
	)

	const password = "plaintext-secret-value"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"password": []byte(password)}}
	if _, err := client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Secrets("default").Get(ctx, "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data["password"]) != password {
		t.Errorf("the API returns the Secret's password as %q, want %q", got.Data["password"], password)
	}
	v := raw("/registry/secrets/" + string(c) + "/default/s")
	if !strings.HasPrefix(v, aescbc) {
		t.Errorf("the Secret in etcd starts with %q, want %q", truncate(v, len(aescbc)), aescbc)
	}
	if strings.Contains(v, password) || strings.Contains(v, base64.StdEncoding.EncodeToString([]byte(password))) {
		t.Errorf("the Secret in etcd holds its password in clear")
	}

	const note = "plaintext-configmap-value"
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"note": note}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := raw("/registry/configmaps/" + string(c) + "/default/cm"); strings.HasPrefix(v, "k8s:enc:") || !strings.Contains(v, note) {
		t.Errorf("the ConfigMap in etcd is %q, want it unencrypted, holding %q", truncate(v, 64), note)
	}

	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	createCRD(t, s, c, testCRD("gadgets", "", apiextensionsv1.NamespaceScoped))
	waitForCRD(t, s, c, "gadgets.example.com", "Established", established)
	dyn := dynamicFor(t, s, c)
	eventually(t, crdControllerTimeout, "gadgets to be served", func(ctx context.Context) (bool, error) {
		_, err := countObjects(ctx, dyn, gadgets)
		return err == nil, err
	})
	const spec = "plaintext-gadget-value"
	gadget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"},
		"spec":     map[string]any{"value": spec},
	}}
	if _, err := dyn.Resource(gadgets).Namespace("default").Create(ctx, gadget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := dyn.Resource(gadgets).Namespace("default").Get(ctx, "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(back.Object, "spec", "value"); v != spec {
		t.Errorf("the API returns the Gadget's spec.value as %q, want %q", v, spec)
	}
	for key, plain := range map[string]string{
		"/registry/example.com/gadgets/customresources/" + string(c) + "/default/g":                      spec,
		"/registry/apiextensions.k8s.io/customresourcedefinitions/" + string(c) + "/gadgets.example.com": "Gadget",
	} {
		v := raw(key)
		if !strings.HasPrefix(v, secretbox) {
			t.Errorf("%s in etcd starts with %q, want %q", key, truncate(v, len(secretbox)), secretbox)
		}
		if strings.Contains(v, plain) {
			t.Errorf("%s in etcd holds %q in clear", key, plain)
		}
	}

	// Deleting the logical cluster finds its custom resources through its
	// CRDs, read from etcd: encrypted, they must be decrypted.
	if err := dynamicFor(t, s, c).Resource(logicalClusterGVR).Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var left []string
	eventually(t, crdControllerTimeout, "nothing of cluster "+string(c)+" to be left in etcd", func(ctx context.Context) (bool, error) {
		left, err = clusterKeys(ctx, etcdClient, c)
		return err == nil && len(left) == 0, fmt.Errorf("keys left: %v (%v)", left, err)
	})
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// TestEncryptionConfigInvalid: `tessera start` with an encryption
// configuration it cannot use fails before it serves, naming the flag and
// the problem.
func TestEncryptionConfigInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{name: "missing file", want: "no such file"},
		{name: "not a configuration", content: "apiVersion: v1\nkind: ConfigMap\n", want: "error decoding encryption provider configuration file"},
		{name: "short key", content: `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ["secrets"]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: c2hvcnQ=
`, want: "secret is not of the expected length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "missing.yaml")
			if tc.content != "" {
				path = writeFile(t, "encryption.yaml", tc.content)
			}
			args := []string{"--root-directory", t.TempDir(), "--encryption-provider-config", path}
			for _, flag := range []string{"--secure-port", "--embedded-etcd-client-port", "--embedded-etcd-peer-port"} {
				p, err := etcd.FreePort()
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, flag, strconv.Itoa(p))
			}
			o := options.NewOptions()
			fs := pflag.NewFlagSet("start", pflag.ContinueOnError)
			o.AddFlagsTo(fs)
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			completed, err := o.Complete()
			if err != nil {
				t.Fatal(err)
			}
			if errs := completed.Validate(); len(errs) > 0 {
				t.Fatal(errs)
			}
			// Should the shard start after all, it stops when ctx ends.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err = app.Run(ctx, completed)
			if err == nil || !strings.Contains(err.Error(), "--encryption-provider-config "+path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("tessera start: %v, want an error naming --encryption-provider-config %s and %q", err, path, tc.want)
			}
			t.Logf("tessera start: %v", err)
		})
	}
}
