package crd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

const twoCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cowboys.wildwest.dev
spec:
  group: wildwest.dev
  names: {kind: Cowboy, listKind: CowboyList, plural: cowboys, singular: cowboy}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {intent: {type: string}}}}}
    subresources: {status: {}}
    additionalPrinterColumns: [{name: Intent, type: string, jsonPath: .spec.intent}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sheriffs.wildwest.dev
spec:
  group: wildwest.dev
  names: {kind: Sheriff, listKind: SheriffList, plural: sheriffs, singular: sheriff}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - {name: v2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`

func snapshot(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetIn(strings.NewReader(input))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"snapshot"}, args...))
	err := cmd.Execute()
	return out.String(), err
}

func TestSnapshot(t *testing.T) {
	out, err := snapshot(t, twoCRDs, "-f", "-", "--prefix", "today")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out, "---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2:\n%s", len(docs), out)
	}
	var cowboys, sheriffs apisv1alpha1.APIResourceSchema
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cowboys); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &sheriffs); err != nil {
		t.Fatal(err)
	}
	if cowboys.APIVersion != "apis.kcp.io/v1alpha1" || cowboys.Kind != "APIResourceSchema" || cowboys.Name != "today.cowboys.wildwest.dev" {
		t.Errorf("first schema %s %s %s", cowboys.APIVersion, cowboys.Kind, cowboys.Name)
	}
	v := cowboys.Spec.Versions[0]
	s, err := v.GetSchema()
	if err != nil || s.Properties["spec"].Properties["intent"].Type != "string" {
		t.Errorf("the version's schema: %v %v", s, err)
	}
	if v.Subresources.Status == nil || len(v.AdditionalPrinterColumns) != 1 || cowboys.Spec.Scope != "Namespaced" {
		t.Errorf("subresources, columns or scope lost: %+v", cowboys.Spec)
	}
	if sheriffs.Name != "today.sheriffs.wildwest.dev" || len(sheriffs.Spec.Versions) != 2 || !sheriffs.Spec.Versions[1].Storage ||
		sheriffs.Spec.Conversion == nil || sheriffs.Spec.Conversion.Strategy != apisv1alpha1.NoneConverter {
		t.Errorf("second schema: %+v", sheriffs.Spec)
	}

	out, err = snapshot(t, twoCRDs, "-f", "-", "--prefix", "today", "-o", "json")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("json output: %v\n%s", err, out)
	}
}

func TestSnapshotRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		input string
		args  []string
		want  string
	}{
		{"no prefix", twoCRDs, []string{"-f", "-"}, "--prefix is required"},
		{"no file", twoCRDs, []string{"--prefix", "p"}, "--filename is required"},
		{"a bad prefix", twoCRDs, []string{"-f", "-", "--prefix", "Not_A_Name"}, "is not valid"},
		{"not a CRD", "", []string{"-f", file, "--prefix", "p"}, "ConfigMap"},
		{"a bad output", twoCRDs, []string{"-f", "-", "--prefix", "p", "-o", "xml"}, "yaml or json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := snapshot(t, tc.input, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
