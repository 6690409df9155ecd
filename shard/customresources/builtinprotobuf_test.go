package customresources

import (
	"bytes"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// TestBuiltinProtobuf: a Deployment as a custom resource goes to protobuf
// as kube-apiserver encodes it, and back, and other objects go to the meta
// serializer.
func TestBuiltinProtobuf(t *testing.T) {
	kind := appsv1.SchemeGroupVersion.WithKind("Deployment")
	if !isBuiltinKind(kind) || isBuiltinKind(schema.GroupVersionKind{Group: "wildwest.dev", Version: "v1alpha1", Kind: "Cowboy"}) {
		t.Fatal("isBuiltinKind")
	}
	meta := protobuf.NewSerializer(newScheme(), newObjectTyper(newScheme()))
	s := newBuiltinProtobuf(kind, meta)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "kuard", "namespace": "web", "labels": map[string]any{"app": "kuard"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "kuard"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "kuard"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "kuard", "image": "kuard:blue"}}},
			},
		},
	}}
	var buf bytes.Buffer
	if err := s.Encode(u, &buf); err != nil {
		t.Fatal(err)
	}
	// kube-apiserver's protobuf of the same Deployment reads back.
	obj, _, err := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Decode(buf.Bytes(), nil, &appsv1.Deployment{})
	if err != nil {
		t.Fatal(err)
	}
	if d := obj.(*appsv1.Deployment); *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "kuard:blue" {
		t.Errorf("encoded Deployment: %+v", d.Spec)
	}
	back, gvk, err := s.Decode(buf.Bytes(), nil, nil)
	if err != nil || *gvk != kind {
		t.Fatalf("decode: %v %v", gvk, err)
	}
	bu := back.(*unstructured.Unstructured)
	containers, _, _ := unstructured.NestedSlice(bu.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 || containers[0].(map[string]any)["image"] != "kuard:blue" || bu.GetName() != "kuard" || bu.GetLabels()["app"] != "kuard" {
		t.Errorf("decoded: %v", bu.Object)
	}
	// A list (the answer to a list or a deletecollection, which the
	// namespace deleter asks for in protobuf) is encoded as the kind's list.
	buf.Reset()
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": map[string]any{"resourceVersion": "7"}}}
	list.Items = []unstructured.Unstructured{*u}
	if err := s.Encode(list, &buf); err != nil {
		t.Fatal(err)
	}
	obj, _, err = protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Decode(buf.Bytes(), nil, &appsv1.DeploymentList{})
	if err != nil {
		t.Fatal(err)
	}
	if l := obj.(*appsv1.DeploymentList); len(l.Items) != 1 || l.Items[0].Name != "kuard" || l.ResourceVersion != "7" {
		t.Errorf("encoded DeploymentList: %+v", l)
	}
	// A Status goes to the meta serializer.
	buf.Reset()
	if err := s.Encode(&metav1.Status{Status: metav1.StatusFailure, Message: "no"}, &buf); err != nil || buf.Len() == 0 {
		t.Errorf("encoding a Status: %v", err)
	}
}
