package discovery

import (
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	apidiscoveryv2conversion "k8s.io/apiserver/pkg/apis/apidiscovery/v2"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// newAggregatedCodecs returns the codecs k8s.io/apiserver's aggregated
// discovery manager serves with: apidiscovery.k8s.io v2 and v2beta1 with the
// conversion between them, and CBOR when its feature gate is on.
func newAggregatedCodecs() (runtime.NegotiatedSerializer, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		apidiscoveryv2.AddToScheme,
		apidiscoveryv2beta1.AddToScheme,
		apidiscoveryv2conversion.RegisterConversions,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	var opts []serializer.CodecFactoryOptionsMutator
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.CBORServingAndStorage) {
		opts = append(opts, serializer.WithSerializer(cbor.NewSerializerInfo))
	}
	return serializer.NewCodecFactory(scheme, opts...), nil
}

// newLegacyCodecs returns codecs for the meta/v1 discovery types and Status,
// registered unversioned as the generic server registers them.
func newLegacyCodecs() runtime.NegotiatedSerializer {
	scheme := runtime.NewScheme()
	v1 := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(scheme, v1)
	scheme.AddUnversionedTypes(v1,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return serializer.NewCodecFactory(scheme)
}
