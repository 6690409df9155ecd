package server

import (
	"context"
	"fmt"
	"io"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	openapibuilder3 "k8s.io/kube-openapi/pkg/builder3"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/admission/objectlimit"
	"github.com/tessera-dev/tessera/shard/admission/policies"
	"github.com/tessera-dev/tessera/shard/admission/resourcequota"
	"github.com/tessera-dev/tessera/shard/admission/webhooks"
	quotactrl "github.com/tessera-dev/tessera/shard/controllers/resourcequota"
	"github.com/tessera-dev/tessera/shard/customresources"
	"github.com/tessera-dev/tessera/shard/fairness"
	"github.com/tessera-dev/tessera/shard/registry/builtin"
	"github.com/tessera-dev/tessera/shard/storage"
)

// namedPlugin is an admission plugin of the shard's chain.
type namedPlugin struct {
	name   string
	plugin admission.Interface
}

// admissionChain builds the shard's admission chain from plugins, in
// order, the way kube-apiserver builds its own (admission.Plugins), so that
// the chain reinvokes mutating plugins when a webhook asks for it.
func admissionChain(plugins ...namedPlugin) (admission.Interface, error) {
	registry := admission.NewPlugins()
	names := make([]string, 0, len(plugins))
	for _, p := range plugins {
		registry.Register(p.name, func(io.Reader) (admission.Interface, error) { return p.plugin, nil })
		names = append(names, p.name)
	}
	return registry.NewFromPlugins(names, noPluginConfig{}, noInitializer{}, nil)
}

type noPluginConfig struct{}

func (noPluginConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }

type noInitializer struct{}

func (noInitializer) Initialize(admission.Interface) {}

// webhookPlugins returns the mutating and validating webhook plugins of the
// shard, over its shared informers.
func (s *Server) webhookPlugins() ([]namedPlugin, error) {
	gc := s.CompletedConfig.Generic
	cfg := rest.CopyConfig(gc.LoopbackClientConfig)
	rest.AddUserAgent(cfg, "tessera-admission-webhooks")
	clients, err := clusters.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("admission webhook clients: %w", err)
	}
	deps := webhooks.Dependencies{
		Namespaces:  s.Informers.Namespaces(),
		Clients:     clients,
		Authorizer:  gc.Authorization.Authorizer,
		Drained:     gc.DrainedNotify(),
		MaxClusters: s.CompletedConfig.Options.AdmissionWebhookClusters,
	}
	mutating, err := webhooks.NewMutating(s.Informers.MutatingWebhookConfigurations(), deps)
	if err != nil {
		return nil, err
	}
	validating, err := webhooks.NewValidating(s.Informers.ValidatingWebhookConfigurations(), deps)
	if err != nil {
		return nil, err
	}
	dyn, err := clusters.NewDynamicForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("admission policy clients: %w", err)
	}
	vapDeps := policies.Dependencies{
		Policies:     s.Informers.ValidatingAdmissionPolicies(),
		Bindings:     s.Informers.ValidatingAdmissionPolicyBindings(),
		Namespaces:   s.Informers.Namespaces(),
		Clients:      clients,
		Params:       dyn,
		ResolveParam: s.resolveParamKind,
		Authorizer:   gc.Authorization.Authorizer,
	}
	vap, err := policies.New(vapDeps)
	if err != nil {
		return nil, err
	}
	mapPlugin, err := policies.NewMutating(policies.MutatingDependencies{
		Dependencies:   vapDeps,
		Policies:       s.Informers.MutatingAdmissionPolicies(),
		Bindings:       s.Informers.MutatingAdmissionPolicyBindings(),
		TypeConverters: s.typeConverters(),
	})
	if err != nil {
		return nil, err
	}
	return []namedPlugin{
		{policies.MutatingPluginName, mapPlugin},
		{webhooks.MutatingPluginName, mutating},
		{policies.PluginName, vap},
		{webhooks.ValidatingPluginName, validating},
	}, nil
}

// typeConverters returns the type converters mutating admission policies
// apply configurations with: one for the built-in kinds, built from the
// shard's OpenAPI definitions on first use, and one per CRD (of the
// cluster's CRDs, by group and kind), kept in a bounded cache by the CRD's
// UID and resourceVersion.
func (s *Server) typeConverters() policies.TypeConverterFunc {
	var (
		once      sync.Once
		static    managedfields.TypeConverter
		staticErr error
		builtins  = map[schema.GroupVersionKind]bool{}
		crdCache  = lru.New(256)
	)
	for _, r := range builtin.Resources() {
		builtins[r.GroupVersion.WithKind(r.Kind)] = true
	}
	logger := klog.Background().WithName("mutating-admission-policy")
	return func(cluster logicalcluster.Name, gvk schema.GroupVersionKind) managedfields.TypeConverter {
		if builtins[gvk] {
			once.Do(func() {
				var names []string
				for k := range builtins {
					obj, err := s.Scheme.New(k)
					if err != nil {
						staticErr = err
						return
					}
					names = append(names, openapiutil.GetCanonicalTypeName(obj))
				}
				models, err := openapibuilder3.BuildOpenAPIDefinitionsForResources(s.CompletedConfig.Generic.OpenAPIV3Config, names...)
				if err != nil {
					staticErr = err
					return
				}
				static, staticErr = managedfields.NewTypeConverter(models, false)
			})
			if staticErr != nil {
				logger.Error(staticErr, "Building the type converter of the built-in kinds")
				return nil
			}
			return static
		}
		crds, err := s.crds.Lister().Cluster(cluster).List(labels.Everything())
		if err != nil {
			return nil
		}
		for _, crd := range crds {
			if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
				continue
			}
			key := string(crd.UID) + "/" + crd.ResourceVersion
			if tc, ok := crdCache.Get(key); ok {
				return tc.(managedfields.TypeConverter)
			}
			tc, err := customresources.TypeConverter(logger, crd)
			if err != nil {
				logger.Error(err, "Building the type converter of a CRD", "cluster", cluster, "crd", crd.Name)
				return nil
			}
			crdCache.Add(key, tc)
			return tc
		}
		return nil
	}
}

// resolveParamKind returns the resource and scope of the kind a policy
// takes its params from in a logical cluster: a built-in kind, or one of
// the cluster's CRDs that serves the version.
func (s *Server) resolveParamKind(cluster logicalcluster.Name, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
	for _, r := range builtin.Resources() {
		if r.GroupVersion == gvk.GroupVersion() && r.Kind == gvk.Kind {
			return r.GroupVersion.WithResource(r.Resource), r.Namespaced, nil
		}
	}
	crds, err := s.crds.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	for _, crd := range crds {
		if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gvk.Version && v.Served {
				return schema.GroupVersionResource{Group: gvk.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, nil
			}
		}
	}
	return schema.GroupVersionResource{}, false, fmt.Errorf("no resource of kind %s is served in logical cluster %s", gvk, cluster)
}

// quotaPlugin returns the ResourceQuota admission plugin of the shard, and
// adds the controller that keeps the quotas' status.used current, whose
// recounts the plugin triggers when objects are deleted.
func (s *Server) quotaPlugin() (namedPlugin, error) {
	gc := s.CompletedConfig.Generic
	ctrl, err := quotactrl.New(gc.LoopbackClientConfig, s.Informers)
	if err != nil {
		return namedPlugin{}, fmt.Errorf("resource quota controller: %w", err)
	}
	s.controllers = append(s.controllers, ctrl)
	cfg := rest.CopyConfig(gc.LoopbackClientConfig)
	rest.AddUserAgent(cfg, "tessera-admission-resourcequota")
	clients, err := clusters.NewForConfig(cfg)
	if err != nil {
		return namedPlugin{}, fmt.Errorf("resource quota admission clients: %w", err)
	}
	p, err := resourcequota.New(resourcequota.Dependencies{
		Quotas:    s.Informers.ResourceQuotas(),
		Clients:   clients,
		Replenish: ctrl.Replenish,
		Count:     s.countQuotas,
		Stop:      gc.DrainedNotify(),
	})
	if err != nil {
		return namedPlugin{}, err
	}
	return namedPlugin{resourcequota.PluginName, p}, nil
}

// objectLimitPlugin returns the per-cluster object limit plugin, and adds
// its scanner to the shard's controllers.
func (s *Server) objectLimitPlugin() (namedPlugin, error) {
	o := s.CompletedConfig.Options
	crds := s.Informers.CustomResourceDefinitions()
	p, err := objectlimit.New(objectlimit.Config{
		DefaultLimit:    o.LogicalClusterObjectLimit,
		LogicalClusters: s.logicalClusters,
		KV:              s.etcdClient,
		Root:            s.CompletedConfig.EtcdPrefix,
		ScanInterval:    o.LogicalClusterObjectScanInterval,
		AfterScan:       (&orphanedKeys{s: s}).afterScan,
		Prefixes: func() []string {
			prefixes := s.CompletedConfig.Storage.ResourcePrefixes()
			seen := map[string]bool{}
			all, _ := crds.Lister().List(labels.Everything())
			for _, crd := range all {
				p := storage.CustomResourcePrefix(schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural})
				if !seen[p] {
					seen[p] = true
					prefixes = append(prefixes, p)
				}
			}
			return append(prefixes, s.boundPrefixes()...)
		},
	})
	if err != nil {
		return namedPlugin{}, err
	}
	s.controllers = append(s.controllers, p)
	if apf, ok := s.CompletedConfig.Generic.FlowControl.(*fairness.Fairness); ok {
		apf.SetListCounter(s.listCounter(p))
	}
	return namedPlugin{objectlimit.PluginName, p}, nil
}

// listCounter counts the objects of a resource in a logical cluster from
// the object scanner's last scan.
func (s *Server) listCounter(p *objectlimit.Plugin) fairness.ListCounter {
	builtins := map[schema.GroupResource]string{}
	for _, r := range builtin.Resources() {
		prefix, ok := s.CompletedConfig.Storage.Prefixes[r.StorageResource]
		if !ok {
			prefix = storage.ResourcePrefix(r.StorageResource)
		}
		builtins[schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Resource}] = prefix
	}
	return func(cluster logicalcluster.Name, group, resource string) (int64, bool) {
		prefix, ok := builtins[schema.GroupResource{Group: group, Resource: resource}]
		if !ok {
			prefix = storage.CustomResourcePrefix(schema.GroupResource{Group: group, Resource: resource})
		}
		return p.ResourceCount(prefix, cluster)
	}
}

// countQuotas counts the ResourceQuotas of a namespace of a logical cluster
// in etcd, keys only: a linearizable read, as fresh as the API server's.
func (s *Server) countQuotas(ctx context.Context, cluster logicalcluster.Name, namespace string) (int64, error) {
	prefix := storage.ClusterPrefix(s.EtcdPrefix, s.Storage.PrefixOf(corev1.Resource("resourcequotas")), cluster) + namespace + "/"
	resp, err := s.etcdClient.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}
