package webhooks

import (
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	admissionregistrationv1informers "k8s.io/client-go/informers/admissionregistration/v1"
	"k8s.io/client-go/informers/core"
	corev1informers "k8s.io/client-go/informers/core/v1"
	admissionregistrationv1listers "k8s.io/client-go/listers/admissionregistration/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// clusterView is the SharedInformerFactory an upstream webhook plugin of
// one logical cluster is given. It implements what the plugins read
// (Core().V1().Namespaces() and the webhook configurations of
// Admissionregistration().V1()); the embedded interfaces are nil, so
// anything else panics, which a test of each plugin kind would show.
type clusterView struct {
	clientinformers.SharedInformerFactory

	cluster    logicalcluster.Name
	namespaces corev1listers.NamespaceLister
	mutating   admissionregistrationv1listers.MutatingWebhookConfigurationLister
	validating admissionregistrationv1listers.ValidatingWebhookConfigurationLister
	// nsSynced and configsSynced tell whether the shared informers have
	// synced and delivered their initial events.
	nsSynced, configsSynced synced
	// handlers receive the events of the cluster's configurations; the
	// upstream plugin registers one while it is initialised.
	handlers *[]cache.ResourceEventHandler
}

func (v *clusterView) Core() core.Interface { return coreView{v: v} }

func (v *clusterView) Admissionregistration() admissionregistration.Interface {
	return admissionregistrationView{v: v}
}

type coreView struct {
	core.Interface
	v *clusterView
}

func (c coreView) V1() corev1informers.Interface { return coreV1View{v: c.v} }

type coreV1View struct {
	corev1informers.Interface
	v *clusterView
}

func (c coreV1View) Namespaces() corev1informers.TypedNamespaceInformer {
	return namespacesView{v: c.v}
}

type namespacesView struct {
	corev1informers.TypedNamespaceInformer
	v *clusterView
}

func (n namespacesView) Informer() cache.SharedIndexInformer {
	return &informerView{synced: n.v.nsSynced}
}

func (n namespacesView) Lister() corev1listers.NamespaceLister { return n.v.namespaces }

type admissionregistrationView struct {
	admissionregistration.Interface
	v *clusterView
}

func (a admissionregistrationView) V1() admissionregistrationv1informers.Interface {
	return admissionregistrationV1View{v: a.v}
}

type admissionregistrationV1View struct {
	admissionregistrationv1informers.Interface
	v *clusterView
}

func (a admissionregistrationV1View) MutatingWebhookConfigurations() admissionregistrationv1informers.TypedMutatingWebhookConfigurationInformer {
	return mutatingView{v: a.v}
}

func (a admissionregistrationV1View) ValidatingWebhookConfigurations() admissionregistrationv1informers.TypedValidatingWebhookConfigurationInformer {
	return validatingView{v: a.v}
}

type mutatingView struct {
	admissionregistrationv1informers.TypedMutatingWebhookConfigurationInformer
	v *clusterView
}

func (m mutatingView) Informer() cache.SharedIndexInformer {
	return &informerView{synced: m.v.configsSynced, handlers: m.v.handlers}
}

func (m mutatingView) Lister() admissionregistrationv1listers.MutatingWebhookConfigurationLister {
	return m.v.mutating
}

type validatingView struct {
	admissionregistrationv1informers.TypedValidatingWebhookConfigurationInformer
	v *clusterView
}

func (m validatingView) Informer() cache.SharedIndexInformer {
	return &informerView{synced: m.v.configsSynced, handlers: m.v.handlers}
}

func (m validatingView) Lister() admissionregistrationv1listers.ValidatingWebhookConfigurationLister {
	return m.v.validating
}

// synced is what tells that a shared informer, or the shard's handler on
// it, has synced.
type synced interface {
	HasSynced() bool
	HasSyncedChecker() cache.DoneChecker
}

// informerView stands for a shared informer of one logical cluster: it
// records event handlers for the shard's handler to call and reports the
// shared informer's sync. It runs nothing.
type informerView struct {
	cache.SharedIndexInformer
	synced   synced
	handlers *[]cache.ResourceEventHandler
}

func (i *informerView) HasSynced() bool { return i.synced.HasSynced() }

func (i *informerView) HasSyncedChecker() cache.DoneChecker { return i.synced.HasSyncedChecker() }

// AddEventHandler records h; the shard's handler calls it for events of
// the view's cluster, after those of its initial list.
func (i *informerView) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	*i.handlers = append(*i.handlers, h)
	return i.synced, nil
}
