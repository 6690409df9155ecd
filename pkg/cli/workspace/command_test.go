package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/clientcmd"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
)

// step is one invocation of kubectl ws and what it must print.
type step struct {
	args    []string
	out     string
	errText string // a substring of stderr; empty means success
}

func runSteps(t *testing.T, kubeconfig string, steps []step) {
	t.Helper()
	for _, s := range steps {
		out, errOut, code := run(t, kubeconfig, s.args...)
		name := "kubectl ws " + strings.Join(s.args, " ")
		if s.errText == "" {
			if code != 0 {
				t.Fatalf("%s: exit code %d, stderr:\n%s", name, code, errOut)
			}
		} else {
			if code == 0 {
				t.Fatalf("%s: succeeded, want error containing %q; stdout:\n%s", name, s.errText, out)
			}
			if !strings.HasPrefix(errOut, "error: ") || !strings.Contains(errOut, s.errText) {
				t.Fatalf("%s: stderr %q, want \"error: ...%s...\"", name, errOut, s.errText)
			}
		}
		if out != s.out {
			t.Fatalf("%s: stdout\n%s\nwant\n%s", name, out, s.out)
		}
	}
}

// TestQuickstart replays the kubectl ws transcript of kcp's quickstart.
func TestQuickstart(t *testing.T) {
	f := newFakeKCP(t)
	f.readyAfter = 2
	kc := f.writeKubeconfig(t, "/clusters/root")

	runSteps(t, kc, []step{
		{args: []string{"."}, out: "Current workspace is \"root\".\n"},
		{args: []string{"create", "a", "--enter"}, out: "Workspace \"a\" (type root:organization) created. Waiting for it to be ready...\n" +
			"Workspace \"a\" (type root:organization) is ready to use.\n" +
			"Current workspace is \"root:a\".\n"},
		{args: []string{"create", "b"}, out: "Workspace \"b\" (type root:universal) created. Waiting for it to be ready...\n" +
			"Workspace \"b\" (type root:universal) is ready to use.\n"},
		{args: []string{"b"}, out: "Current workspace is \"root:a:b\".\n"},
		{args: []string{".."}, out: "Current workspace is \"root:a\".\n"},
		{args: []string{"-"}, out: "Current workspace is \"root:a:b\".\n"},
		{args: []string{"root"}, out: "Current workspace is \"root\".\n"},
		{args: []string{"current"}, out: "Current workspace is \"root\".\n"},
		{args: []string{"use", "root:a:b"}, out: "Current workspace is \"root:a:b\".\n"},
		{args: []string{"current", "--short"}, out: "root:a:b\n"},
		{args: []string{".", "--short"}, out: "root:a:b\n"},
	})

	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != CurrentContextName {
		t.Errorf("current-context is %q, want %q", cfg.CurrentContext, CurrentContextName)
	}
	for name, want := range map[string]string{
		CurrentContextName:  f.srv.URL + "/clusters/root:a:b",
		PreviousContextName: f.srv.URL + "/clusters/root",
		"admin":             f.srv.URL + "/clusters/root",
	} {
		ctx := cfg.Contexts[name]
		if ctx == nil {
			t.Errorf("context %q missing", name)
			continue
		}
		if got := cfg.Clusters[ctx.Cluster].Server; got != want {
			t.Errorf("context %q has server %q, want %q", name, got, want)
		}
		if ctx.AuthInfo != "admin" {
			t.Errorf("context %q has user %q, want admin", name, ctx.AuthInfo)
		}
	}
}

func TestUseErrors(t *testing.T) {
	f := newFakeKCP(t)
	f.add("root:a", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:init", corev1alpha1.LogicalClusterPhaseInitializing)
	kc := f.writeKubeconfig(t, "/clusters/root")

	runSteps(t, kc, []step{
		{args: []string{"x"}, errText: `workspace "x" not found in "root"`},
		{args: []string{"init"}, errText: `workspace "init" is not ready (phase Initializing)`},
		{args: []string{"root:a:x"}, errText: `workspace "x" not found in "root:a"`},
		{args: []string{"root:nope:x"}, errText: `workspace "x" not found in "root:nope"`},
		{args: []string{".."}, errText: `workspace "root" has no parent`},
		{args: []string{"-"}, errText: "no previous workspace found in the kubeconfig"},
		{args: []string{"Bad_Name"}, errText: `invalid workspace name or path "Bad_Name"`},
		{args: []string{"a", "b"}, errText: "accepts at most 1 arg(s), received 2"},
	})
	if got, want := currentServer(t, kc), f.srv.URL+"/clusters/root"; got != want {
		t.Errorf("failed switches changed the server to %q", got)
	}
}

func TestUseForbiddenParent(t *testing.T) {
	f := newFakeKCP(t)
	f.add("root:org", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:org:team", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:org:secret", corev1alpha1.LogicalClusterPhaseReady)
	f.forbidden["root:org"] = true
	f.denied["root:org:secret"] = true
	kc := f.writeKubeconfig(t, "/clusters/root")

	runSteps(t, kc, []step{
		{args: []string{"root:org:team"}, out: "Current workspace is \"root:org:team\".\n"},
		{args: []string{"root:org:secret"}, errText: `access to workspace "root:org:secret" denied`},
		{args: []string{"root:org:nope"}, errText: `workspace "root:org:nope" not found`},
	})
}

func TestHome(t *testing.T) {
	f := newFakeKCP(t)
	f.homeThrottled = 2
	f.homeUnavailable = 1
	f.homeNotReady = 2
	kc := f.writeKubeconfig(t, "/clusters/root")

	home := t.TempDir()
	t.Setenv("HOME", home)

	runSteps(t, kc, []step{
		{args: nil, out: "Current workspace is \"root:users:ab:alice\".\n"},
		{args: []string{"root"}, out: "Current workspace is \"root\".\n"},
		{args: []string{"~"}, out: "Current workspace is \"root:users:ab:alice\".\n"},
		{args: []string{"root"}, out: "Current workspace is \"root\".\n"},
		// An unquoted ~ the shell expanded.
		{args: []string{home}, out: "Current workspace is \"root:users:ab:alice\".\n"},
		{args: []string{"use", "-"}, out: "Current workspace is \"root\".\n"},
	})

	f.homeNotReady = 1000
	runSteps(t, kc, []step{
		{args: []string{"~", "--timeout", "300ms"}, errText: "home workspace did not become ready within 300ms (phase Initializing)"},
	})
}

func TestNotAWorkspaceURL(t *testing.T) {
	f := newFakeKCP(t)
	f.add("root:a", corev1alpha1.LogicalClusterPhaseReady)

	for _, tc := range []struct {
		args    []string
		out     string
		errText string
	}{
		{args: []string{"."}, errText: fmt.Sprintf("current URL %q is not a workspace URL", f.srv.URL)},
		{args: []string{"tree"}, errText: "is not a workspace URL"},
		{args: []string{"create", "x"}, errText: "is not a workspace URL"},
		{args: []string{"a"}, errText: "is not a workspace URL"},
		{args: []string{".."}, errText: "is not a workspace URL"},
		{args: []string{"root"}, out: "Current workspace is \"root\".\n"},
		{args: []string{"root:a"}, out: "Current workspace is \"root:a\".\n"},
		{args: []string{"~"}, out: "Current workspace is \"root:users:ab:alice\".\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			kc := f.writeKubeconfig(t, "")
			runSteps(t, kc, []step{{args: tc.args, out: tc.out, errText: tc.errText}})
		})
	}

	// Going back to the base URL prints it.
	kc := f.writeKubeconfig(t, "/")
	runSteps(t, kc, []step{
		{args: []string{"root"}, out: "Current workspace is \"root\".\n"},
		{args: []string{"-"}, out: fmt.Sprintf("Current workspace is the URL %q.\n", f.srv.URL+"/")},
	})
}

func TestCreate(t *testing.T) {
	f := newFakeKCP(t)
	f.readyAfter = 1
	f.add("root:org", corev1alpha1.LogicalClusterPhaseReady)
	f.createError = func(parent string, ws *tenancyv1alpha1.Workspace) *apierrors.StatusError {
		switch {
		case ws.Name == "denied":
			return apierrors.NewForbidden(tenancyv1alpha1.Resource("workspaces"), ws.Name, fmt.Errorf("workspace type root:team only allows organization parents"))
		case ws.Spec.Type != nil && ws.Spec.Type.Name == "bogus":
			return apierrors.NewInvalid(tenancyv1alpha1.Kind("Workspace"), ws.Name, field.ErrorList{field.NotFound(field.NewPath("spec", "type"), "root:bogus")})
		}
		return nil
	}
	kc := f.writeKubeconfig(t, "/clusters/root:org")

	runSteps(t, kc, []step{
		{args: []string{"create", "team", "--type", "root:team"}, out: "Workspace \"team\" (type root:team) created. Waiting for it to be ready...\n" +
			"Workspace \"team\" (type root:team) is ready to use.\n"},
		{args: []string{"create", "team"}, errText: `creating workspace "team" in "root:org": workspaces.tenancy.kcp.io "team" already exists`},
		{args: []string{"create", "team", "--ignore-existing"}, out: "Workspace \"team\" (type root:team) already exists.\n" +
			"Workspace \"team\" (type root:team) is ready to use.\n"},
		{args: []string{"create", "team", "--ignore-existing", "--type", "team"}, out: "Workspace \"team\" (type root:team) already exists.\n" +
			"Workspace \"team\" (type root:team) is ready to use.\n"},
		{args: []string{"create", "team", "--ignore-existing", "--type", "root:universal"}, errText: `workspace "team" already exists in "root:org" with type root:team, not root:universal`},
		{args: []string{"create", "denied"}, errText: `workspace type root:team only allows organization parents`},
		{args: []string{"create", "x", "--type", "bogus"}, errText: `Workspace.tenancy.kcp.io "x" is invalid: spec.type: Not found: "root:bogus"`},
		{args: []string{"create", "x", "--type", "Root:Bad"}, errText: `invalid --type "Root:Bad"`},
		{args: []string{"create", "a:b"}, errText: `invalid workspace name "a:b"`},
		{args: []string{"create", "nowait", "--timeout", "0", "--location-selector", "region=eu,tier in (gold,silver)"}, out: "Workspace \"nowait\" (type root:universal) created.\n"},
		{args: []string{"create", "entered", "--type", "root:universal", "--enter"}, out: "Workspace \"entered\" (type root:universal) created. Waiting for it to be ready...\n" +
			"Workspace \"entered\" (type root:universal) is ready to use.\n" +
			"Current workspace is \"root:org:entered\".\n"},
	})

	var nowait *tenancyv1alpha1.Workspace
	for _, ws := range f.created {
		if ws.Name == "nowait" {
			nowait = ws
		}
	}
	if nowait == nil || nowait.Spec.Location == nil || nowait.Spec.Location.Selector == nil {
		t.Fatalf("workspace nowait was not created with a location selector: %+v", nowait)
	}
	sel := nowait.Spec.Location.Selector
	if sel.MatchLabels["region"] != "eu" || len(sel.MatchExpressions) != 1 || sel.MatchExpressions[0].Key != "tier" || len(sel.MatchExpressions[0].Values) != 2 {
		t.Errorf("location selector is %+v, want region=eu and tier in (gold,silver)", sel)
	}
}

func TestCreateTimeout(t *testing.T) {
	f := newFakeKCP(t)
	kc := f.writeKubeconfig(t, "/clusters/root")
	runSteps(t, kc, []step{
		{args: []string{"create", "slow", "--timeout", "300ms", "--enter"},
			out:     "Workspace \"slow\" (type root:organization) created. Waiting for it to be ready...\n",
			errText: `workspace "slow" did not become ready within 300ms (phase Scheduling)`},
	})
	if got, want := currentServer(t, kc), f.srv.URL+"/clusters/root"; got != want {
		t.Errorf("a failed --enter switched to %q", got)
	}
}

func TestTree(t *testing.T) {
	f := newFakeKCP(t)
	f.add("root:a", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:a:b", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:a:b:c", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:a:d", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:pending", corev1alpha1.LogicalClusterPhaseInitializing)
	f.add("root:pending:hidden", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:users", corev1alpha1.LogicalClusterPhaseReady)
	f.add("root:users:ab", corev1alpha1.LogicalClusterPhaseReady)
	f.forbidden["root:users"] = true

	kc := f.writeKubeconfig(t, "/clusters/root")
	runSteps(t, kc, []step{{args: []string{"tree"}, out: `.
└── root
    ├── a
    │   ├── b
    │   │   └── c
    │   └── d
    ├── pending
    └── users
`}})

	kc = f.writeKubeconfig(t, "/clusters/root:a")
	runSteps(t, kc, []step{{args: []string{"tree"}, out: `.
└── root:a
    ├── b
    │   └── c
    └── d
`}})
}

func TestRunReportsKubeconfigErrors(t *testing.T) {
	f := newFakeKCP(t)
	kc := f.writeKubeconfig(t, "/clusters/root")
	runSteps(t, kc, []step{
		{args: []string{".", "--context", "nope"}, errText: `context "nope" not found in the kubeconfig`},
		{args: []string{"--bogus"}, errText: "unknown flag: --bogus"},
	})

	missing := filepath.Join(t.TempDir(), "missing")
	if _, errOut, code := run(t, missing, "."); code == 0 || !strings.HasPrefix(errOut, "error: ") {
		t.Errorf("a missing kubeconfig gave exit code %d and stderr %q", code, errOut)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a failed command created %s", missing)
	}
}
