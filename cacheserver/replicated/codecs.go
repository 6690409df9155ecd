package replicated

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Codecs is the NegotiatedSerializer of the cache server's endpoints:
// replicas as Unstructured objects, and the meta kinds (Status,
// WatchEvent, Table, PartialObjectMetadata, options) from a scheme, in JSON
// and YAML. Replicas are never converted: each resource has one version.
type Codecs struct {
	scheme     *runtime.Scheme
	typer      objectTyper
	creater    objectCreater
	converter  converter
	mediaTypes []runtime.SerializerInfo
}

var _ runtime.NegotiatedSerializer = &Codecs{}

// NewCodecs returns the codecs of the given resources.
func NewCodecs(resources []Resource) *Codecs {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(metav1.AddMetaToScheme(scheme))
	seen := map[schema.GroupVersion]bool{}
	for _, r := range resources {
		if gv := r.GroupVersion(); !seen[gv] {
			seen[gv] = true
			// WatchEvent and the option kinds in the resource's own
			// version, as for any Kubernetes group.
			metav1.AddToGroupVersion(scheme, gv)
		}
	}
	c := &Codecs{scheme: scheme}
	c.typer = objectTyper{scheme: scheme, unstructured: crdserverscheme.NewUnstructuredObjectTyper()}
	c.creater = objectCreater{scheme: scheme}
	c.converter = converter{scheme: scheme}
	serializer := func(o json.SerializerOptions) *json.Serializer {
		return json.NewSerializerWithOptions(json.DefaultMetaFactory, c.creater, c.typer, o)
	}
	c.mediaTypes = []runtime.SerializerInfo{
		{
			MediaType:        runtime.ContentTypeJSON,
			MediaTypeType:    "application",
			MediaTypeSubType: "json",
			EncodesAsText:    true,
			Serializer:       serializer(json.SerializerOptions{}),
			PrettySerializer: serializer(json.SerializerOptions{Pretty: true}),
			StrictSerializer: serializer(json.SerializerOptions{Strict: true}),
			StreamSerializer: &runtime.StreamSerializerInfo{
				EncodesAsText: true,
				Serializer:    serializer(json.SerializerOptions{}),
				Framer:        json.Framer,
			},
		},
		{
			MediaType:        runtime.ContentTypeYAML,
			MediaTypeType:    "application",
			MediaTypeSubType: "yaml",
			EncodesAsText:    true,
			Serializer:       serializer(json.SerializerOptions{Yaml: true}),
			StrictSerializer: serializer(json.SerializerOptions{Yaml: true, Strict: true}),
		},
	}
	return c
}

// Scheme holds the meta kinds.
func (c *Codecs) Scheme() *runtime.Scheme { return c.scheme }

// SupportedMediaTypes implements runtime.NegotiatedSerializer.
func (c *Codecs) SupportedMediaTypes() []runtime.SerializerInfo { return c.mediaTypes }

// EncoderForVersion implements runtime.NegotiatedSerializer.
func (c *Codecs) EncoderForVersion(encoder runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return versioning.NewCodec(encoder, nil, c.converter, c.creater, c.typer, nil, gv, nil, "cacheEncoder")
}

// DecoderToVersion implements runtime.NegotiatedSerializer.
func (c *Codecs) DecoderToVersion(decoder runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return versioning.NewCodec(nil, decoder, c.converter, c.creater, c.typer, nil, nil, gv, "cacheDecoder")
}

// Typer types Unstructured objects by their apiVersion and kind, anything
// else by the scheme.
func (c *Codecs) Typer() runtime.ObjectTyper { return c.typer }

// Creater creates the scheme's kinds, and Unstructured objects of any
// other kind.
func (c *Codecs) Creater() runtime.ObjectCreater { return c.creater }

// Converter converts the scheme's kinds; replicas only into their own
// version.
func (c *Codecs) Converter() runtime.ObjectConvertor { return c.converter }

type objectTyper struct {
	scheme       *runtime.Scheme
	unstructured runtime.ObjectTyper
}

func (t objectTyper) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if _, ok := obj.(runtime.Unstructured); ok {
		return t.unstructured.ObjectKinds(obj)
	}
	return t.scheme.ObjectKinds(obj)
}

func (t objectTyper) Recognizes(gvk schema.GroupVersionKind) bool {
	return t.scheme.Recognizes(gvk) || t.unstructured.Recognizes(gvk)
}

type objectCreater struct {
	scheme *runtime.Scheme
}

func (c objectCreater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	if c.scheme.Recognizes(kind) {
		return c.scheme.New(kind)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// converter leaves replicas as they are (their only version is the one
// they are served in) and converts the meta kinds with the scheme.
type converter struct {
	scheme *runtime.Scheme
}

func (c converter) Convert(in, out, context interface{}) error {
	if u, ok := in.(*unstructured.Unstructured); ok {
		o, ok := out.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("cannot convert %T into %T", in, out)
		}
		o.SetUnstructuredContent(u.DeepCopy().UnstructuredContent())
		return nil
	}
	return c.scheme.Convert(in, out, context)
}

func (c converter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	if _, ok := in.(runtime.Unstructured); ok {
		kind := in.GetObjectKind().GroupVersionKind()
		target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{kind})
		if !ok || target.GroupVersion() != kind.GroupVersion() {
			return nil, fmt.Errorf("%s is served in %s only", kind.Kind, kind.GroupVersion())
		}
		return in, nil
	}
	return c.scheme.ConvertToVersion(in, gv)
}

// ConvertFieldLabel accepts the field selectors every resource has:
// metadata.name, and metadata.namespace (always empty).
func (c converter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s (only metadata.name is)", label)
}
