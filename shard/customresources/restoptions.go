package customresources

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/recognizer"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/shard/storage"
)

// ResourcePrefix is the etcd key prefix, below the storage prefix
// (/registry), of the custom resources of group/resource in every logical
// cluster; the storage decorator inserts the cluster after it.
func ResourcePrefix(resource schema.GroupResource) string {
	return storage.CustomResourcePrefix(resource)
}

// resourcePrefixOf is the key prefix of the objects of crd: the
// custom-resource prefix, or for a CRD that serves a resource bound
// through an APIExport (annotation apis.kcp.io/identity), the prefix of the
// export's identity.
func resourcePrefixOf(crd *apiextensionsv1.CustomResourceDefinition) string {
	gr := schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Status.AcceptedNames.Plural}
	if gr.Resource == "" {
		gr.Resource = crd.Spec.Names.Plural
	}
	if identity := crd.Annotations[apisv1alpha1.AnnotationAPIIdentityKey]; identity != "" {
		return storage.BoundResourcePrefix(gr, identity)
	}
	return ResourcePrefix(gr)
}

// RESTOptionsGetter hands out the storage options of custom resources of
// any group: Backend for the resource, through Decorator. It is what
// Config.RESTOptionsGetter needs when the shard's getter only knows the
// groups of its scheme.
type RESTOptionsGetter struct {
	// Backend is the etcd configuration (transport, /registry prefix,
	// compaction).
	Backend storagebackend.Config
	// Transformers encrypt values at rest, per resource, as for built-in
	// resources: an EncryptionConfiguration that names <plural>.<group>,
	// *.<group> or *.* encrypts custom resources too. Nil stores them as
	// they are.
	Transformers value.ResourceTransformers
	// Decorator builds the cluster-aware store; see SharedEtcd.Decorator, or
	// shard/storage.Decorator(false).
	Decorator generic.StorageDecorator
	// DeleteCollectionWorkers is how many deletes a deletecollection runs in
	// parallel; at least 1.
	DeleteCollectionWorkers int
}

var _ generic.RESTOptionsGetter = &RESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter. The codec is left to
// the caller.
func (g *RESTOptionsGetter) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	if g.Decorator == nil {
		return generic.RESTOptions{}, fmt.Errorf("no storage decorator for %s", resource)
	}
	cfg := g.Backend.ForResource(resource)
	if g.Transformers != nil {
		cfg.Transformer = g.Transformers.TransformerForResource(resource)
	}
	return generic.RESTOptions{
		StorageConfig:           cfg,
		Decorator:               g.Decorator,
		EnableGarbageCollection: true,
		DeleteCollectionWorkers: max(g.DeleteCollectionWorkers, 1),
		ResourcePrefix:          ResourcePrefix(resource),
	}, nil
}

// versionRESTOptions hands customresource.NewStorage the storage of one
// version of a CRD: the configured getter's options with the
// custom-resource key prefix and the version's codec.
type versionRESTOptions struct {
	getter generic.RESTOptionsGetter
	codec  runtime.Codec
	// storageVersion is what objects are encoded in.
	storageVersion schema.GroupVersion
	// prefix is the key prefix of the objects (resourcePrefixOf).
	prefix string
}

var _ generic.RESTOptionsGetter = versionRESTOptions{}

func (o versionRESTOptions) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := o.getter.GetRESTOptions(resource, example)
	if err != nil {
		return generic.RESTOptions{}, fmt.Errorf("getting the storage options of %s: %w", resource, err)
	}
	if opts.StorageConfig == nil {
		return generic.RESTOptions{}, fmt.Errorf("the storage options of %s have no storage configuration", resource)
	}
	cfg := *opts.StorageConfig
	cfg.Codec = o.codec
	cfg.EncodeVersioner = o.storageVersion
	opts.StorageConfig = &cfg
	opts.ResourcePrefix = o.prefix
	decorator := opts.Decorator
	if decorator == nil {
		decorator = generic.UndecoratedStorage
	}
	opts.Decorator = withTooLarge(decorator)
	// Object counts are polled per store; that would be a goroutine per
	// cluster and CRD.
	opts.CountMetricPollPeriod = 0
	return opts, nil
}

// storageCodec returns the codec of one version's store: objects are
// encoded as JSON (CBOR when the CBORServingAndStorage feature is on) in the
// storage version; decoding accepts both, converts into the served version,
// coerces by the schema (dropping unknown fields and malformed metadata,
// repairing a missing generation) and applies defaults. Its FromStored does
// the same to an object the shared watch cache decoded without a schema.
func storageCodec(scheme *runtime.Scheme, converter runtime.ObjectConvertor, schemas *crdSchemas, storageVersion, version schema.GroupVersion) *storedCodec {
	ucbor := cbor.NewSerializer(unstructuredCreator{}, crdserverscheme.NewUnstructuredObjectTyper())
	var encoder runtime.Encoder = unstructured.UnstructuredJSONScheme
	if utilfeature.DefaultFeatureGate.Enabled(features.CBORServingAndStorage) {
		encoder = ucbor
	}
	raw := runtime.NewCodec(encoder, recognizer.NewDecoder(ucbor, unstructured.UnstructuredJSONScheme))
	coercer := schemaCoercer{schemas: schemas, dropInvalidMetadata: true, repairGeneration: true}
	decoder := coercingDecoder{delegate: raw, coercer: coercer}
	coercingConv := coercingConverter{delegate: converter, coercer: schemaCoercer{schemas: schemas}}
	defaulter := crDefaulter{delegate: scheme, schemas: schemas}
	return &storedCodec{
		Codec: versioning.NewCodec(raw, decoder, coercingConv, unstructuredCreator{}, crdserverscheme.NewUnstructuredObjectTyper(),
			defaulter, storageVersion, version, "customresourcesStorage"),
		coercer:   coercer,
		defaulter: defaulter,
		converter: coercingConv,
		version:   version,
	}
}

// rawStorageCodec reads objects as they are stored, without a schema: what
// the shared watch cache of a group/resource holds.
func rawStorageCodec() runtime.Codec {
	ucbor := cbor.NewSerializer(unstructuredCreator{}, crdserverscheme.NewUnstructuredObjectTyper())
	return runtime.NewCodec(unstructured.UnstructuredJSONScheme, recognizer.NewDecoder(ucbor, unstructured.UnstructuredJSONScheme))
}

// storedCodec is a version's storage codec.
type storedCodec struct {
	runtime.Codec
	coercer   schemaCoercer
	defaulter runtime.ObjectDefaulter
	converter runtime.ObjectConvertor
	version   schema.GroupVersion
}

// FromStored turns an object decoded without a schema (by rawStorageCodec)
// into what Decode makes of the same bytes, in the same steps as the
// versioning codec: coerce by the schema of the stored version, default,
// convert into the served version (coercing again). It modifies stored.
func (c *storedCodec) FromStored(stored, into runtime.Object) error {
	u, ok := stored.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("a cached custom resource is a %T, not an Unstructured", stored)
	}
	if _, err := c.coercer.apply(u); err != nil {
		return err
	}
	c.defaulter.Default(u)
	return c.converter.Convert(u, into, c.version)
}
