package workload

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// Names inside the manifest, as kcp's.
const (
	// kubeconfigKey is the key of the syncer's kubeconfig in its Secret.
	kubeconfigKey = "kubeconfig"
	// kubeconfigDir is where the Secret is mounted in the syncer's pod.
	kubeconfigDir = "/kcp/"
	// containerName is the name of the syncer's container.
	containerName = "kcp-syncer"
)

// manifestInput is what the physical cluster's manifest is made of.
type manifestInput struct {
	// syncerID names the namespace's objects and the cluster-wide RBAC:
	// kcp-syncer-<synctarget>-<hash of its UID>.
	syncerID string
	// namespace is the syncer's namespace on the physical cluster.
	namespace string
	// syncTarget and syncTargetUID are the SyncTarget's name and UID.
	syncTarget, syncTargetUID string
	// cluster is the logical cluster name of the SyncTarget's workspace.
	cluster string
	image   string
	// replicas of the syncer's Deployment, 0 or 1.
	replicas int32
	// resources are the --resources the syncer is started with.
	resources []string
	// permissions are the resources, <resource>[.<group>], the syncer may
	// do anything with on the physical cluster.
	permissions []string
	qps         float32
	burst       int
	// cleanDelay is how long the syncer waits before it deletes a
	// downstream namespace.
	cleanDelay time.Duration
	// kubeconfig is the syncer's kubeconfig for its workspace.
	kubeconfig []byte
}

// syncerKubeconfig is the kubeconfig the syncer reaches its workspace with:
// the workspace's URL, the CA (PEM) the user's kubeconfig trusts, and the
// service account's token, in the namespace of the service account.
func syncerKubeconfig(server string, caData []byte, insecure bool, token, namespace string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["default-cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData, InsecureSkipTLSVerify: insecure}
	cfg.AuthInfos["default-user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-user", Namespace: namespace}
	cfg.CurrentContext = "default-context"
	return clientcmd.Write(*cfg)
}

// syncerArgs are the arguments of tessera-syncer in the Deployment.
func syncerArgs(in manifestInput) []string {
	args := []string{
		"--from-kubeconfig=" + kubeconfigDir + kubeconfigKey,
		"--sync-target-name=" + in.syncTarget,
		"--sync-target-uid=" + in.syncTargetUID,
		"--from-cluster=" + in.cluster,
		"--qps=" + strconv.FormatFloat(float64(in.qps), 'g', -1, 32),
		"--burst=" + strconv.Itoa(in.burst),
		"--downstream-namespace-clean-delay=" + in.cleanDelay.String(),
	}
	for _, r := range in.resources {
		args = append(args, "--resources="+r)
	}
	return args
}

// podSubresources are what the syncer also needs of pods when it syncs
// them, as kcp grants.
var podSubresources = []string{"pods/log", "pods/exec", "pods/attach", "pods/binding", "pods/portforward", "pods/proxy", "pods/ephemeralcontainers"}

// physicalRules are the syncer's permissions on the physical cluster:
// kcp's fixed ones, reading API services, and everything on the synced
// resources, one rule per group in the order of the groups.
func physicalRules(permissions []string) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create", "get", "list", "watch", "update", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"endpoints"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "watch", "list"}},
		{APIGroups: []string{"apiregistration.k8s.io"}, Resources: []string{"apiservices"}, Verbs: []string{"get", "watch", "list"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"create", "list", "watch"}},
		{APIGroups: []string{"apiresource.kcp.io"}, Resources: []string{"apiresourceimports"}, Verbs: []string{"create", "update", "list", "watch"}},
	}
	byGroup := map[string][]string{}
	for _, p := range permissions {
		gr := schema.ParseGroupResource(p)
		if slices.Contains(byGroup[gr.Group], gr.Resource) {
			continue
		}
		byGroup[gr.Group] = append(byGroup[gr.Group], gr.Resource)
		if gr.Group == "" && gr.Resource == "pods" {
			byGroup[gr.Group] = append(byGroup[gr.Group], podSubresources...)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: byGroup[g], Verbs: []string{"*"}})
	}
	return rules
}

// manifestObjects are the objects the physical cluster gets, in the order
// kubectl apply creates them: the syncer's namespace, service account and
// its token, its RBAC, its kubeconfig and its Deployment.
func manifestObjects(in manifestInput) []runtime.Object {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: in.namespace} }
	labels := map[string]string{"app": in.syncerID}
	replicas := in.replicas
	optional := false
	return []runtime.Object{
		&corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: in.namespace},
		},
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(in.syncerID),
		},
		&corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: tokenSecretName(in.syncerID), Namespace: in.namespace,
				Annotations: map[string]string{corev1.ServiceAccountNameKey: in.syncerID}},
			Type: corev1.SecretTypeServiceAccountToken,
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: in.syncerID},
			Rules:      physicalRules(in.permissions),
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: in.syncerID},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: in.syncerID},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: in.syncerID, Namespace: in.namespace}},
		},
		&corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: meta(in.syncerID),
			StringData: map[string]string{kubeconfigKey: string(in.kubeconfig)},
		},
		&appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: meta(in.syncerID),
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: in.syncerID,
						Containers: []corev1.Container{{
							Name:  containerName,
							Image: in.image,
							Args:  syncerArgs(in),
							Env: []corev1.EnvVar{{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{
								FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"},
							}}},
							ImagePullPolicy:          corev1.PullIfNotPresent,
							TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
							VolumeMounts:             []corev1.VolumeMount{{Name: "kcp-config", MountPath: kubeconfigDir, ReadOnly: true}},
						}},
						Volumes: []corev1.Volume{{Name: "kcp-config", VolumeSource: corev1.VolumeSource{
							Secret: &corev1.SecretVolumeSource{SecretName: in.syncerID, Optional: &optional},
						}}},
					},
				},
			},
		},
	}
}

// renderManifest writes the manifest's objects as YAML documents, without
// the empty creationTimestamp and status fields of the Go types.
func renderManifest(in manifestInput) ([]byte, error) {
	var buf bytes.Buffer
	for _, obj := range manifestObjects(in) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		delete(m, "status")
		unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(m, "spec", "template", "metadata", "creationTimestamp")
		b, err := yaml.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// tokenSecretName names the token Secret of the syncer's service account,
// in the workspace and on the physical cluster.
func tokenSecretName(syncerID string) string { return syncerID + "-token" }

// qualifiedResource writes a group resource as the plugin's flags do,
// <resource>.<group>, the resource alone for the core group.
func qualifiedResource(group, resource string) string {
	return strings.TrimSuffix(resource+"."+group, ".")
}
