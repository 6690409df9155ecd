package integration

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/bootstrap"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestThirdPartyInitializer plays a third-party initializer: it owns a
// WorkspaceType with an initializer, finds the initializing workspaces
// through the virtual workspace URL the type publishes, sets up their
// content and finishes their initialization.
func TestThirdPartyInitializer(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "ini-token,initializer,ini-uid,"))
	root := kcpClient(t, s, "root")
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "mytype"}, Spec: tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true}}
	if _, err := root.WorkspaceTypes().Create(t.Context(), wt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	initializer := tenancyv1alpha1.InitializerFor("root", "mytype")
	var vwURL string
	eventually(t, workspaceTimeout, "the virtual workspace URL of root:mytype", func(ctx context.Context) (bool, error) {
		wt, err := root.WorkspaceTypes().Get(ctx, "mytype", metav1.GetOptions{})
		if err != nil || len(wt.Status.VirtualWorkspaces) == 0 {
			return false, err
		}
		vwURL = wt.Status.VirtualWorkspaces[0].URL
		return true, nil
	})
	if want := s.URL + "/services/initializingworkspaces/" + string(initializer); vwURL != want {
		t.Fatalf("virtual workspace URL %q, want %q", vwURL, want)
	}

	// The initializer's user may initialize mytype (and enter root, where
	// the type lives).
	createRole(t, s, "root", "initialize-mytype", rbacv1.PolicyRule{Verbs: []string{"initialize"}, APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{"mytype"}})
	bindClusterRole(t, s, "root", "", "initializer", "initialize-mytype", authzUser("initializer"))
	bindClusterRole(t, s, "root", "", "initializer-access", bootstrap.WorkspaceAccessClusterRole, authzUser("initializer"))

	if _, err := root.Workspaces().Create(t.Context(), &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "mytype", Path: "root"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ws *tenancyv1alpha1.Workspace
	eventually(t, workspaceTimeout, "workspace w to wait for the initializer alone", func(ctx context.Context) (bool, error) {
		var err error
		ws, err = root.Workspaces().Get(ctx, "w", metav1.GetOptions{})
		return err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing &&
			slices.Equal(ws.Status.Initializers, []corev1alpha1.LogicalClusterInitializer{initializer}), err
	})
	cluster := logicalcluster.Name(ws.Spec.Cluster)

	// The initializer lists its workspaces across the shard.
	vw := tokenConfig(s, "", "ini-token")
	vw.Host = vwURL + "/clusters/*"
	dyn, err := dynamic.NewForConfig(vw)
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	eventuallyAllowed(t, "listing initializing logical clusters through the virtual workspace", func(ctx context.Context) error {
		l, err := dyn.Resource(logicalClusterGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		list = nil
		for _, item := range l.Items {
			list = append(list, item.GetAnnotations()[logicalcluster.PathAnnotationKey])
		}
		return nil
	})
	if !slices.Equal(list, []string{"root:w"}) {
		t.Errorf("initializing logical clusters of %s: %v, want [root:w]", initializer, list)
	}
	// kubectl sees the same.
	kubeconfig := tokenKubeconfig(t, s, "", "ini-token")
	out, err := framework.RunKubectl("--kubeconfig", kubeconfig, "--server", vwURL+"/clusters/*", "get", "logicalclusters", "-o", "jsonpath={.items[*].metadata.annotations.kcp\\.io/path}")
	if err != nil || strings.TrimSpace(out) != "root:w" {
		t.Errorf("kubectl get logicalclusters through the virtual workspace: %v\n%s", err, out)
	}
	// Others may not.
	stranger := tokenConfig(s, "", "wrong-token")
	stranger.Host = vw.Host
	if d, err := dynamic.NewForConfig(stranger); err == nil {
		if _, err := d.Resource(logicalClusterGVR).List(t.Context(), metav1.ListOptions{}); err == nil {
			t.Error("an unauthenticated user listed initializing logical clusters")
		}
	}

	// It sets up the content of the workspace through the virtual
	// workspace, before anyone else can enter it.
	inside := tokenConfig(s, "", "ini-token")
	inside.Host = vwURL + "/clusters/" + string(cluster)
	k, err := kubernetes.NewForConfig(inside)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "provided"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a namespace in the initializing workspace: %v", err)
	}

	// It finishes: the workspace becomes Ready with that content.
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"initializers": []string{}}})
	insideDyn, err := dynamic.NewForConfig(inside)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := insideDyn.Resource(logicalClusterGVR).Patch(t.Context(), corev1alpha1.LogicalClusterName, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("removing the initializer through the virtual workspace: %v", err)
	}
	waitWorkspaceReady(t, s, "root", "w")
	if _, err := kube(t, s, "root:w").CoreV1().Namespaces().Get(t.Context(), "provided", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace set up by the initializer: %v", err)
	}
	// The initialized workspace left the virtual workspace.
	l, err := dyn.Resource(logicalClusterGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Errorf("initializing logical clusters after initialization: %v, %d items", err, len(l.Items))
	}
}
