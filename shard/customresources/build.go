package customresources

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/scale/scheme/autoscalingv1"
	"k8s.io/klog/v2"
)

// errWebhookConversion refuses CRDs that convert through a webhook: a
// tenant's webhook would be called from inside the shard, and kcp does not
// support them either.
var errWebhookConversion = errors.New("conversion webhooks are not supported")

// webhookConversion tells whether crd converts through a webhook.
func webhookConversion(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
}

// errWebhookConversionStatus is what requests for the custom resources of
// a CRD with webhook conversion get: 503 ServiceUnavailable (the server
// cannot serve the resource as defined; no Retry-After, so clients do not
// retry at once) with a message that says why and how to fix it.
func errWebhookConversionStatus(crd *apiextensionsv1.CustomResourceDefinition) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf(
		"%s: CustomResourceDefinition %s has spec.conversion.strategy %s; only %s is served",
		errWebhookConversion, crd.Name, apiextensionsv1.WebhookConverter, apiextensionsv1.NoneConverter))
}

// crdBuild holds what every version of one CRD shares while its serving
// state is built.
type crdBuild struct {
	crd            *apiextensionsv1.CustomResourceDefinition
	storageVersion schema.GroupVersion
	schemas        *crdSchemas
	typeConverter  managedfields.TypeConverter
	safeConverter  runtime.ObjectConvertor
	unsafeConv     runtime.ObjectConvertor
	replicasPaths  managedfields.ResourcePathMappings
	equivalents    runtime.EquivalentResourceRegistry
	clusterScoped  bool
}

// buildState builds the serving state of crd. On error nothing is left to
// destroy.
func (h *Handler) buildState(logger klog.Logger, crd *apiextensionsv1.CustomResourceDefinition) (_ *servingState, err error) {
	b, err := h.prepareBuild(logger, crd)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	state := &servingState{versions: map[string]*versionState{}, ctx: ctx, cancel: cancel}
	defer func() {
		if err != nil {
			state.destroy()
		}
	}()
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		vs, err := h.buildVersion(logger, b, v)
		if err != nil {
			return nil, fmt.Errorf("version %s: %w", v.Name, err)
		}
		state.versions[v.Name] = vs
	}
	if err := h.addStatusScopes(b, state); err != nil {
		return nil, err
	}
	return state, nil
}

// prepareBuild computes what all versions share.
func (h *Handler) prepareBuild(logger klog.Logger, crd *apiextensionsv1.CustomResourceDefinition) (*crdBuild, error) {
	names := crd.Status.AcceptedNames
	if names.Plural == "" || names.Singular == "" || names.Kind == "" || names.ListKind == "" {
		return nil, fmt.Errorf("CustomResourceDefinition %s has incomplete status.acceptedNames", crd.Name)
	}
	if webhookConversion(crd) {
		return nil, errWebhookConversion
	}
	storageVersion, err := apiextensionshelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return nil, fmt.Errorf("finding the storage version: %w", err)
	}
	schemas, err := structuralSchemas(crd)
	if err != nil {
		return nil, err
	}
	tc, err := typeConverter(logger, crd)
	if err != nil {
		return nil, err
	}
	safe, unsafe, err := h.converters.NewConverter(crd)
	if err != nil {
		return nil, fmt.Errorf("building the converter: %w", err)
	}
	paths, err := replicasPaths(crd)
	if err != nil {
		return nil, err
	}
	b := &crdBuild{
		crd:            crd,
		storageVersion: schema.GroupVersion{Group: crd.Spec.Group, Version: storageVersion},
		schemas:        schemas,
		typeConverter:  tc,
		safeConverter:  safe,
		unsafeConv:     unsafe,
		replicasPaths:  paths,
		equivalents:    runtime.NewEquivalentResourceRegistry(),
		clusterScoped:  crd.Spec.Scope == apiextensionsv1.ClusterScoped,
	}
	for _, v := range crd.Spec.Versions {
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: names.Plural}
		kind := gvr.GroupVersion().WithKind(names.Kind)
		b.equivalents.RegisterKindFor(gvr, "", kind)
		sub, err := apiextensionshelpers.GetSubresourcesForVersion(crd, v.Name)
		if err != nil {
			return nil, fmt.Errorf("reading the subresources of version %s: %w", v.Name, err)
		}
		if sub != nil && sub.Status != nil {
			b.equivalents.RegisterKindFor(gvr, "status", kind)
		}
		if sub != nil && sub.Scale != nil {
			b.equivalents.RegisterKindFor(gvr, "scale", autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
		}
	}
	return b, nil
}

// buildVersion builds the store and request scopes of one served version.
func (h *Handler) buildVersion(logger klog.Logger, b *crdBuild, v *apiextensionsv1.CustomResourceDefinitionVersion) (*versionState, error) {
	crd := b.crd
	names := crd.Status.AcceptedNames
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
	resource := gv.WithResource(names.Plural)
	kind := gv.WithKind(names.Kind)

	// The option kinds are decoded in the version of the request.
	parameterScheme := runtime.NewScheme()
	parameterScheme.AddUnversionedTypes(gv, &metav1.ListOptions{}, &metav1.GetOptions{}, &metav1.DeleteOptions{})
	typer := newObjectTyper(parameterScheme)

	subresources, err := apiextensionshelpers.GetSubresourcesForVersion(crd, v.Name)
	if err != nil {
		return nil, fmt.Errorf("reading the subresources: %w", err)
	}
	parts, err := newStrategyParts(b, v, subresources)
	if err != nil {
		return nil, err
	}
	table, err := tableConvertor(kind, v)
	if err != nil {
		logger.Info("Invalid printer columns, using the default ones", "crd", crd.Name, "version", v.Name, "err", err)
	}
	strategy := customresource.NewStrategy(typer, !b.clusterScoped, kind, parts.validator, parts.statusValidator,
		b.schemas.byVersion[v.Name], parts.status, parts.scale, v.SelectableFields)
	storage, err := customresource.NewStorage(
		resource.GroupResource(),
		gv.WithResource(names.Singular).GroupResource(),
		kind,
		gv.WithKind(names.ListKind),
		strategy,
		versionRESTOptions{
			getter:         h.config.RESTOptionsGetter,
			codec:          storageCodec(h.scheme, b.safeConverter, b.schemas, b.storageVersion, gv),
			storageVersion: b.storageVersion,
			prefix:         resourcePrefixOf(crd),
		},
		names.Categories,
		table,
		b.replicasPaths,
	)
	if err != nil {
		return nil, fmt.Errorf("building the store: %w", err)
	}
	vs := &versionState{storage: storage, subresources: subresources}
	if storage.Status != nil {
		vs.status = storage.Status
	}
	if gv.Group == "" {
		validating := customresource.NewStrategy(typer, !b.clusterScoped, schema.GroupVersionKind{Group: validationGroup, Version: kind.Version, Kind: kind.Kind},
			parts.validator, parts.statusValidator, b.schemas.byVersion[v.Name], parts.status, parts.scale, v.SelectableFields)
		vs.status = useCoreTypeMeta(&storage, coreStrategies{
			strategy: strategy, validating: validating,
			statusStrategy: customresource.NewStatusStrategy(strategy), statusValidating: customresource.NewStatusStrategy(validating),
		})
	}
	if err := h.addScopes(b, vs, v, parameterScheme, typer, resource, kind); err != nil {
		storage.CustomResource.Destroy()
		return nil, err
	}
	if v.Deprecated {
		vs.deprecated = true
		if v.DeprecationWarning != nil {
			vs.warnings = []string{*v.DeprecationWarning}
		} else {
			vs.warnings = []string{deprecationWarning(v.Name, crd.Spec)}
		}
	}
	return vs, nil
}

// strategyParts are the inputs of the customresource strategy of a version
// that come from its schema and subresources. The strategy adds CEL rules,
// list-type and embedded-resource checks and selectable fields.
type strategyParts struct {
	validator       apiservervalidation.SchemaValidator
	statusValidator apiservervalidation.SchemaValidator
	status          *apiextensionsinternal.CustomResourceSubresourceStatus
	scale           *apiextensionsinternal.CustomResourceSubresourceScale
}

func newStrategyParts(b *crdBuild, v *apiextensionsv1.CustomResourceDefinitionVersion, subresources *apiextensionsv1.CustomResourceSubresources) (strategyParts, error) {
	var parts strategyParts
	validation, err := internalValidation(b.crd, v.Name)
	if err != nil {
		return parts, err
	}
	var props *apiextensionsinternal.JSONSchemaProps
	if validation != nil {
		props = validation.OpenAPIV3Schema
	}
	if parts.validator, _, err = apiservervalidation.NewSchemaValidator(props); err != nil {
		return parts, fmt.Errorf("building the schema validator: %w", err)
	}
	if subresources != nil && subresources.Status != nil {
		parts.status = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceStatus_To_apiextensions_CustomResourceSubresourceStatus(subresources.Status, parts.status, nil); err != nil {
			return parts, fmt.Errorf("converting the status subresource: %w", err)
		}
		// The status subresource validates against the status schema only.
		if props != nil {
			if statusProps, ok := props.Properties["status"]; ok {
				if parts.statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusProps); err != nil {
					return parts, fmt.Errorf("building the status schema validator: %w", err)
				}
			}
		}
	}
	if subresources != nil && subresources.Scale != nil {
		parts.scale = &apiextensionsinternal.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subresources.Scale, parts.scale, nil); err != nil {
			return parts, fmt.Errorf("converting the scale subresource: %w", err)
		}
	}
	return parts, nil
}

// addScopes builds the request scopes of the resource and its scale
// subresource; the status scopes need every version's reset fields and are
// added by addStatusScopes.
func (h *Handler) addScopes(b *crdBuild, vs *versionState, v *apiextensionsv1.CustomResourceDefinitionVersion,
	parameterScheme *runtime.Scheme, typer runtime.ObjectTyper, resource schema.GroupVersionResource, kind schema.GroupVersionKind) error {
	ns := newNegotiatedSerializer(h.scheme, typer, b.safeConverter, b.schemas, kind)
	scope := handlers.RequestScope{
		Namer:                    handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: b.clusterScoped},
		Serializer:               ns,
		ParameterCodec:           runtime.NewParameterCodec(parameterScheme),
		StandardSerializers:      ns.standardSerializers(),
		Creater:                  unstructuredCreator{},
		Convertor:                b.safeConverter,
		Defaulter:                crDefaulter{delegate: parameterScheme, schemas: b.schemas},
		Typer:                    typer,
		UnsafeConvertor:          b.unsafeConv,
		Authorizer:               h.config.Authorizer,
		EquivalentResourceMapper: b.equivalents,
		TableConvertor:           vs.storage.CustomResource,
		Resource:                 resource,
		Kind:                     kind,
		// A custom resource endpoint handles objects in its own version.
		HubGroupVersion:     kind.GroupVersion(),
		MetaGroupVersion:    metav1.SchemeGroupVersion,
		MaxRequestBodyBytes: h.config.MaxRequestBodyBytes,
	}
	fm, err := fieldManager(b.typeConverter, &scope, vs.storage.CustomResource.GetResetFields(), "")
	if err != nil {
		return err
	}
	scope.FieldManager = fm
	vs.scope = &scope

	scaleTable, _ := tableconvertor.New(scaleColumns(subresourceScale(vs.subresources)))
	scaleConverter := scale.NewScaleConverter()
	opts := []serializer.CodecFactoryOptionsMutator{
		serializer.WithStreamingCollectionEncodingToJSON(),
		serializer.WithStreamingCollectionEncodingToProtobuf(),
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.CBORServingAndStorage) {
		opts = append(opts, serializer.WithSerializer(cbor.NewSerializerInfo))
	}
	scaleScope := scope
	scaleScope.Subresource = "scale"
	scaleScope.Serializer = serializer.NewCodecFactory(scaleConverter.Scheme(), opts...)
	scaleScope.Kind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	scaleScope.TableConvertor = scaleTable
	scaleScope.FieldManager = nil
	if subresourceScale(vs.subresources) != nil {
		if scaleScope.FieldManager, err = fieldManager(b.typeConverter, &scaleScope, nil, "scale"); err != nil {
			return err
		}
	}
	vs.scaleScope = &scaleScope
	return nil
}

// addStatusScopes adds the request scope of the status subresource to every
// version; its field manager resets the fields the status strategy resets in
// any version.
func (h *Handler) addStatusScopes(b *crdBuild, state *servingState) error {
	reset := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, vs := range state.versions {
		if vs.storage.Status == nil {
			continue
		}
		for apiVersion, set := range vs.storage.Status.GetResetFields() {
			reset[apiVersion] = set
		}
	}
	for _, vs := range state.versions {
		statusScope := *vs.scope
		statusScope.Subresource = "status"
		statusScope.FieldManager = nil
		if vs.subresources != nil && vs.subresources.Status != nil {
			fm, err := fieldManager(b.typeConverter, &statusScope, reset, "status")
			if err != nil {
				return err
			}
			statusScope.FieldManager = fm
		}
		vs.statusScope = &statusScope
	}
	return nil
}

// fieldManager returns the server-side apply field manager of a scope.
func fieldManager(tc managedfields.TypeConverter, scope *handlers.RequestScope, reset map[fieldpath.APIVersion]*fieldpath.Set, subresource string) (*managedfields.FieldManager, error) {
	fm, err := managedfields.NewDefaultCRDFieldManager(tc, scope.Convertor, scope.Defaulter, scope.Creater, scope.Kind,
		scope.HubGroupVersion, subresource, fieldpath.NewExcludeFilterSetMap(reset))
	if err != nil {
		return nil, fmt.Errorf("building the field manager of %s %q: %w", scope.Kind, subresource, err)
	}
	return fm, nil
}

func subresourceScale(s *apiextensionsv1.CustomResourceSubresources) *apiextensionsv1.CustomResourceSubresourceScale {
	if s == nil {
		return nil
	}
	return s.Scale
}

// deprecationWarning is the default warning of a deprecated version: it
// names the newest served version that is not deprecated, if any.
func deprecationWarning(deprecated string, spec apiextensionsv1.CustomResourceDefinitionSpec) string {
	msg := fmt.Sprintf("%s/%s %s is deprecated", spec.Group, deprecated, spec.Names.Kind)
	var newer []string
	for _, v := range spec.Versions {
		if v.Served && !v.Deprecated && version.CompareKubeAwareVersionStrings(deprecated, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	sort.Slice(newer, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0 })
	return msg + fmt.Sprintf("; use %s/%s %s", spec.Group, newer[0], spec.Names.Kind)
}
