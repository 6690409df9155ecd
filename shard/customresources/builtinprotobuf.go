package customresources

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// A bound resource of a Kubernetes kind (a compute service's Deployments,
// Services, Pods...: APIResourceSchemas of the upstream types) is a custom
// resource to the shard, but clients send it in protobuf, as they send the
// kind to a Kubernetes API server: kubectl create deployment does. Its
// endpoints take and give protobuf through the Kubernetes Go type,
// converted from and to the unstructured object the custom resource
// machinery handles (pruning, defaulting and validation by the schema stay
// as they are). Other custom resources stay JSON, YAML and CBOR only.

// isBuiltinKind tells whether kind is a kind of the Kubernetes API that
// client-go knows, which protobuf can carry.
func isBuiltinKind(kind schema.GroupVersionKind) bool {
	return !kind.Empty() && clientgoscheme.Scheme.Recognizes(kind)
}

// builtinProtobuf encodes and decodes the unstructured objects of a
// built-in kind in protobuf; other objects (Status, Table...) go to meta.
type builtinProtobuf struct {
	kind  schema.GroupVersionKind
	typed *protobuf.Serializer
	meta  runtime.Serializer
}

func newBuiltinProtobuf(kind schema.GroupVersionKind, meta runtime.Serializer) *builtinProtobuf {
	s := clientgoscheme.Scheme
	return &builtinProtobuf{kind: kind, typed: protobuf.NewSerializer(s, s), meta: meta}
}

var _ runtime.Serializer = &builtinProtobuf{}

// Decode decodes a built-in object into an Unstructured one.
func (b *builtinProtobuf) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := b.typed.Decode(data, defaults, nil)
	if err != nil {
		return nil, gvk, err
	}
	if *gvk != b.kind {
		return nil, gvk, fmt.Errorf("the body is a %s, not a %s", gvk, b.kind)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, gvk, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(*gvk)
	if into, ok := into.(*unstructured.Unstructured); ok && into != nil {
		into.Object = u.Object
		return into, gvk, nil
	}
	return u, gvk, nil
}

// Encode encodes an Unstructured object of the kind, or a list of them (a
// list or deletecollection answer), as its Go type; any other object with
// the meta serializer.
func (b *builtinProtobuf) Encode(obj runtime.Object, w io.Writer) error {
	kind := b.kind
	var content map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		content = o.Object
		if o.GroupVersionKind() != kind {
			return b.meta.Encode(obj, w)
		}
	case *unstructured.UnstructuredList:
		kind = b.kind.GroupVersion().WithKind(b.kind.Kind + "List")
		content = o.UnstructuredContent()
	default:
		return b.meta.Encode(obj, w)
	}
	typed, err := clientgoscheme.Scheme.New(kind)
	if err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, typed); err != nil {
		return fmt.Errorf("converting %s to protobuf: %w", kind, err)
	}
	typed.GetObjectKind().SetGroupVersionKind(kind)
	return b.typed.Encode(typed, w)
}

// Identifier names the serializer for encoding caches.
func (b *builtinProtobuf) Identifier() runtime.Identifier {
	return runtime.Identifier("builtin-protobuf:" + b.kind.String())
}
