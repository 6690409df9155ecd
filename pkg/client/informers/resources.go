package informers

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The typed accessors below panic if the client their resource needs is
// missing from Clients: that is a wiring error, found on the first call when
// a controller is constructed. Their listers' NotFound errors name the
// resource as client-go's generated listers do (singular, lower case kind).

// Namespaces returns the informer of core/v1 namespaces.
func (f *SharedInformerFactory) Namespaces() Informer[*corev1.Namespace] {
	return typedInformer(f, corev1.SchemeGroupVersion.WithResource("namespaces"), corev1.Resource("namespace"), &corev1.Namespace{},
		func() listWatcher[*corev1.NamespaceList] { return f.kubernetes("namespaces").CoreV1().Namespaces() })
}

// ConfigMaps returns the informer of core/v1 configmaps.
func (f *SharedInformerFactory) ConfigMaps() Informer[*corev1.ConfigMap] {
	return typedInformer(f, corev1.SchemeGroupVersion.WithResource("configmaps"), corev1.Resource("configmap"), &corev1.ConfigMap{},
		func() listWatcher[*corev1.ConfigMapList] {
			return f.kubernetes("configmaps").CoreV1().ConfigMaps(metav1.NamespaceAll)
		})
}

// Secrets returns the informer of core/v1 secrets.
func (f *SharedInformerFactory) Secrets() Informer[*corev1.Secret] {
	return typedInformer(f, corev1.SchemeGroupVersion.WithResource("secrets"), corev1.Resource("secret"), &corev1.Secret{},
		func() listWatcher[*corev1.SecretList] {
			return f.kubernetes("secrets").CoreV1().Secrets(metav1.NamespaceAll)
		})
}

// ServiceAccounts returns the informer of core/v1 serviceaccounts.
func (f *SharedInformerFactory) ServiceAccounts() Informer[*corev1.ServiceAccount] {
	return typedInformer(f, corev1.SchemeGroupVersion.WithResource("serviceaccounts"), corev1.Resource("serviceaccount"), &corev1.ServiceAccount{},
		func() listWatcher[*corev1.ServiceAccountList] {
			return f.kubernetes("serviceaccounts").CoreV1().ServiceAccounts(metav1.NamespaceAll)
		})
}

// Roles returns the informer of rbac.authorization.k8s.io/v1 roles.
func (f *SharedInformerFactory) Roles() Informer[*rbacv1.Role] {
	return typedInformer(f, rbacv1.SchemeGroupVersion.WithResource("roles"), rbacv1.Resource("role"), &rbacv1.Role{},
		func() listWatcher[*rbacv1.RoleList] { return f.kubernetes("roles").RbacV1().Roles(metav1.NamespaceAll) })
}

// RoleBindings returns the informer of rbac.authorization.k8s.io/v1
// rolebindings.
func (f *SharedInformerFactory) RoleBindings() Informer[*rbacv1.RoleBinding] {
	return typedInformer(f, rbacv1.SchemeGroupVersion.WithResource("rolebindings"), rbacv1.Resource("rolebinding"), &rbacv1.RoleBinding{},
		func() listWatcher[*rbacv1.RoleBindingList] {
			return f.kubernetes("rolebindings").RbacV1().RoleBindings(metav1.NamespaceAll)
		})
}

// ClusterRoles returns the informer of rbac.authorization.k8s.io/v1
// clusterroles.
func (f *SharedInformerFactory) ClusterRoles() Informer[*rbacv1.ClusterRole] {
	return typedInformer(f, rbacv1.SchemeGroupVersion.WithResource("clusterroles"), rbacv1.Resource("clusterrole"), &rbacv1.ClusterRole{},
		func() listWatcher[*rbacv1.ClusterRoleList] {
			return f.kubernetes("clusterroles").RbacV1().ClusterRoles()
		})
}

// ClusterRoleBindings returns the informer of rbac.authorization.k8s.io/v1
// clusterrolebindings.
func (f *SharedInformerFactory) ClusterRoleBindings() Informer[*rbacv1.ClusterRoleBinding] {
	return typedInformer(f, rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"), rbacv1.Resource("clusterrolebinding"), &rbacv1.ClusterRoleBinding{},
		func() listWatcher[*rbacv1.ClusterRoleBindingList] {
			return f.kubernetes("clusterrolebindings").RbacV1().ClusterRoleBindings()
		})
}

// CustomResourceDefinitions returns the informer of apiextensions.k8s.io/v1
// customresourcedefinitions.
func (f *SharedInformerFactory) CustomResourceDefinitions() Informer[*apiextensionsv1.CustomResourceDefinition] {
	return typedInformer(f, apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"), apiextensionsv1.Resource("customresourcedefinition"), &apiextensionsv1.CustomResourceDefinition{},
		func() listWatcher[*apiextensionsv1.CustomResourceDefinitionList] {
			return f.apiExtensions("customresourcedefinitions").ApiextensionsV1().CustomResourceDefinitions()
		})
}

// ForResource returns the unstructured informer of any resource the shard
// serves, built-in, CRD or bound through an APIExport (then the resource is
// named <resource>:<identityHash>, as wildcard requests require). Its
// lister's NotFound errors name resource.GroupResource(), as client-go's
// dynamic lister does.
func (f *SharedInformerFactory) ForResource(resource schema.GroupVersionResource) Informer[*unstructured.Unstructured] {
	informer := f.informerFor(informerKey{resource: resource, unstructured: true}, &unstructured.Unstructured{}, func() cache.ListerWatcher {
		return newListWatch[*unstructured.UnstructuredList](f.dynamic(resource.Resource).Resource(resource).Namespace(metav1.NamespaceAll), f.tweak)
	})
	return NewInformer[*unstructured.Unstructured](informer, resource.GroupResource())
}

func (f *SharedInformerFactory) kubernetes(resource string) kubernetes.Interface {
	if f.clients.Kubernetes == nil {
		panic(fmt.Sprintf("informers: Clients.Kubernetes is required for %s", resource))
	}
	return f.clients.Kubernetes
}

func (f *SharedInformerFactory) apiExtensions(resource string) apiextensionsclientset.Interface {
	if f.clients.APIExtensions == nil {
		panic(fmt.Sprintf("informers: Clients.APIExtensions is required for %s", resource))
	}
	return f.clients.APIExtensions
}

func (f *SharedInformerFactory) dynamic(resource string) dynamic.Interface {
	if f.clients.Dynamic == nil {
		panic(fmt.Sprintf("informers: Clients.Dynamic is required for %s", resource))
	}
	return f.clients.Dynamic
}

// MutatingWebhookConfigurations returns the informer of
// admissionregistration.k8s.io/v1 mutatingwebhookconfigurations.
func (f *SharedInformerFactory) MutatingWebhookConfigurations() Informer[*admissionregistrationv1.MutatingWebhookConfiguration] {
	return typedInformer(f, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), admissionregistrationv1.Resource("mutatingwebhookconfiguration"), &admissionregistrationv1.MutatingWebhookConfiguration{},
		func() listWatcher[*admissionregistrationv1.MutatingWebhookConfigurationList] {
			return f.kubernetes("mutatingwebhookconfigurations").AdmissionregistrationV1().MutatingWebhookConfigurations()
		})
}

// MutatingAdmissionPolicies returns the informer of
// admissionregistration.k8s.io/v1 mutatingadmissionpolicies.
func (f *SharedInformerFactory) MutatingAdmissionPolicies() Informer[*admissionregistrationv1.MutatingAdmissionPolicy] {
	return typedInformer(f, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies"), admissionregistrationv1.Resource("mutatingadmissionpolicy"), &admissionregistrationv1.MutatingAdmissionPolicy{},
		func() listWatcher[*admissionregistrationv1.MutatingAdmissionPolicyList] {
			return f.kubernetes("mutatingadmissionpolicies").AdmissionregistrationV1().MutatingAdmissionPolicies()
		})
}

// MutatingAdmissionPolicyBindings returns the informer of
// admissionregistration.k8s.io/v1 mutatingadmissionpolicybindings.
func (f *SharedInformerFactory) MutatingAdmissionPolicyBindings() Informer[*admissionregistrationv1.MutatingAdmissionPolicyBinding] {
	return typedInformer(f, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings"), admissionregistrationv1.Resource("mutatingadmissionpolicybinding"), &admissionregistrationv1.MutatingAdmissionPolicyBinding{},
		func() listWatcher[*admissionregistrationv1.MutatingAdmissionPolicyBindingList] {
			return f.kubernetes("mutatingadmissionpolicybindings").AdmissionregistrationV1().MutatingAdmissionPolicyBindings()
		})
}

// ValidatingAdmissionPolicies returns the informer of
// admissionregistration.k8s.io/v1 validatingadmissionpolicies.
func (f *SharedInformerFactory) ValidatingAdmissionPolicies() Informer[*admissionregistrationv1.ValidatingAdmissionPolicy] {
	return typedInformer(f, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"), admissionregistrationv1.Resource("validatingadmissionpolicy"), &admissionregistrationv1.ValidatingAdmissionPolicy{},
		func() listWatcher[*admissionregistrationv1.ValidatingAdmissionPolicyList] {
			return f.kubernetes("validatingadmissionpolicies").AdmissionregistrationV1().ValidatingAdmissionPolicies()
		})
}

// ValidatingAdmissionPolicyBindings returns the informer of
// admissionregistration.k8s.io/v1 validatingadmissionpolicybindings.
func (f *SharedInformerFactory) ValidatingAdmissionPolicyBindings() Informer[*admissionregistrationv1.ValidatingAdmissionPolicyBinding] {
	return typedInformer(f, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings"), admissionregistrationv1.Resource("validatingadmissionpolicybinding"), &admissionregistrationv1.ValidatingAdmissionPolicyBinding{},
		func() listWatcher[*admissionregistrationv1.ValidatingAdmissionPolicyBindingList] {
			return f.kubernetes("validatingadmissionpolicybindings").AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
		})
}

// ValidatingWebhookConfigurations returns the informer of
// admissionregistration.k8s.io/v1 validatingwebhookconfigurations.
func (f *SharedInformerFactory) ValidatingWebhookConfigurations() Informer[*admissionregistrationv1.ValidatingWebhookConfiguration] {
	return typedInformer(f, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), admissionregistrationv1.Resource("validatingwebhookconfiguration"), &admissionregistrationv1.ValidatingWebhookConfiguration{},
		func() listWatcher[*admissionregistrationv1.ValidatingWebhookConfigurationList] {
			return f.kubernetes("validatingwebhookconfigurations").AdmissionregistrationV1().ValidatingWebhookConfigurations()
		})
}

// ResourceQuotas returns the informer of core/v1 resourcequotas.
func (f *SharedInformerFactory) ResourceQuotas() Informer[*corev1.ResourceQuota] {
	return typedInformer(f, corev1.SchemeGroupVersion.WithResource("resourcequotas"), corev1.Resource("resourcequota"), &corev1.ResourceQuota{},
		func() listWatcher[*corev1.ResourceQuotaList] {
			return f.kubernetes("resourcequotas").CoreV1().ResourceQuotas(metav1.NamespaceAll)
		})
}
