package customresources

import (
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// newScheme returns the scheme of the objects a custom resource endpoint
// handles besides the custom resources themselves: Status, WatchEvent and
// the option kinds, all in the unversioned "v1".
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	v1 := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(s, v1)
	s.AddUnversionedTypes(v1,
		&metav1.Status{}, &metav1.WatchEvent{},
		&metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return s
}

// unstructuredCreator creates Unstructured objects of any kind.
type unstructuredCreator struct{}

func (unstructuredCreator) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// objectTyper types Unstructured objects by their apiVersion and kind, and
// anything else (the option kinds) by a scheme.
type objectTyper struct {
	scheme       runtime.ObjectTyper
	unstructured runtime.ObjectTyper
}

func newObjectTyper(scheme runtime.ObjectTyper) objectTyper {
	return objectTyper{scheme: scheme, unstructured: crdserverscheme.NewUnstructuredObjectTyper()}
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

// negotiatedSerializer serves one version of a custom resource in JSON and
// YAML (CBOR when the CBORServingAndStorage feature is on); protobuf only
// for the meta kinds (Table, PartialObjectMetadata) that the endpoint
// handlers produce, and for the objects of a resource of a Kubernetes kind. Decoding prunes, coerces metadata and defaults by the
// CRD's schema.
type negotiatedSerializer struct {
	scheme     *runtime.Scheme
	converter  runtime.ObjectConvertor
	schemas    *crdSchemas
	mediaTypes []runtime.SerializerInfo
	// builtin: the resource is of a Kubernetes kind, and its objects go in
	// protobuf too (see builtinProtobuf).
	builtin bool
}

// newNegotiatedSerializer returns the serializer of a resource of kind.
func newNegotiatedSerializer(scheme *runtime.Scheme, typer runtime.ObjectTyper, converter runtime.ObjectConvertor, schemas *crdSchemas, kind schema.GroupVersionKind) negotiatedSerializer {
	creator := unstructuredCreator{}
	jsonSerializer := func(o json.SerializerOptions) *json.Serializer {
		return json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, o)
	}
	mediaTypes := []runtime.SerializerInfo{
		{
			MediaType:        runtime.ContentTypeJSON,
			MediaTypeType:    "application",
			MediaTypeSubType: "json",
			EncodesAsText:    true,
			Serializer:       jsonSerializer(json.SerializerOptions{StreamingCollectionsEncoding: true}),
			PrettySerializer: jsonSerializer(json.SerializerOptions{Pretty: true}),
			StrictSerializer: jsonSerializer(json.SerializerOptions{Strict: true, StreamingCollectionsEncoding: true}),
			StreamSerializer: &runtime.StreamSerializerInfo{
				EncodesAsText: true,
				Serializer:    jsonSerializer(json.SerializerOptions{}),
				Framer:        json.Framer,
			},
		},
		{
			MediaType:        runtime.ContentTypeYAML,
			MediaTypeType:    "application",
			MediaTypeSubType: "yaml",
			EncodesAsText:    true,
			Serializer:       jsonSerializer(json.SerializerOptions{Yaml: true}),
			StrictSerializer: jsonSerializer(json.SerializerOptions{Yaml: true, Strict: true}),
		},
		{
			MediaType:        runtime.ContentTypeProtobuf,
			MediaTypeType:    "application",
			MediaTypeSubType: "vnd.kubernetes.protobuf",
			Serializer:       protobuf.NewSerializerWithOptions(creator, typer, protobuf.SerializerOptions{StreamingCollectionsEncoding: true}),
			StreamSerializer: &runtime.StreamSerializerInfo{
				Serializer: protobuf.NewRawSerializer(creator, typer),
				Framer:     protobuf.LengthDelimitedFramer,
			},
		},
	}
	builtin := isBuiltinKind(kind)
	if builtin {
		for i := range mediaTypes {
			if pb := &mediaTypes[i]; pb.MediaType == runtime.ContentTypeProtobuf {
				typed := newBuiltinProtobuf(kind, pb.Serializer)
				pb.Serializer, pb.StrictSerializer = typed, typed
			}
		}
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.CBORServingAndStorage) {
		mediaTypes = append(mediaTypes, cbor.NewSerializerInfo(creator, typer))
	}
	return negotiatedSerializer{scheme: scheme, converter: converter, schemas: schemas, mediaTypes: mediaTypes, builtin: builtin}
}

func (s negotiatedSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.mediaTypes }

// standardSerializers are the media types custom resources themselves can
// be served in: all but protobuf, unless the resource is of a Kubernetes
// kind.
func (s negotiatedSerializer) standardSerializers() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range s.mediaTypes {
		if info.MediaType != runtime.ContentTypeProtobuf || s.builtin {
			out = append(out, info)
		}
	}
	return out
}

func (s negotiatedSerializer) EncoderForVersion(encoder runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return versioning.NewCodec(encoder, nil, s.converter, s.scheme, s.scheme, s.scheme, gv, nil, "customresourcesEncoder")
}

func (s negotiatedSerializer) DecoderToVersion(decoder runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	if decoder == nil {
		// The endpoint handlers ask for the strict decoder of the request's
		// media type, which protobuf does not have; custom resources cannot
		// be decoded from protobuf anyway.
		return unsupportedDecoder{mediaTypes: s.standardSerializers()}
	}
	strict := false
	if js, ok := decoder.(*json.Serializer); ok {
		strict = js.IsStrict()
	}
	coercing := coercingDecoder{delegate: decoder, coercer: schemaCoercer{schemas: s.schemas, returnUnknownFieldPaths: strict}}
	return versioning.NewCodec(nil, coercing, runtime.UnsafeObjectConvertor(s.scheme), s.scheme, s.scheme,
		crDefaulter{delegate: s.scheme, schemas: s.schemas}, nil, gv, "customresourcesDecoder")
}

// unsupportedDecoder fails every decode: there is no decoder of the
// request's media type for custom resources.
type unsupportedDecoder struct {
	mediaTypes []runtime.SerializerInfo
}

func (d unsupportedDecoder) Decode([]byte, *schema.GroupVersionKind, runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	accepted := make([]string, 0, len(d.mediaTypes))
	for _, info := range d.mediaTypes {
		accepted = append(accepted, info.MediaType)
	}
	return nil, nil, negotiation.NewUnsupportedMediaTypeError(accepted)
}
