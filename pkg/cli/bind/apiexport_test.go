package bind

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// consumer is the current workspace of the tests.
const consumer = "root:consumer"

func claim(group, resource string, state apisv1alpha1.AcceptablePermissionClaimState) apisv1alpha1.AcceptablePermissionClaim {
	return apisv1alpha1.AcceptablePermissionClaim{
		PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Group: group, Resource: resource}, All: true},
		State:           state,
	}
}

func exportRefOf(path, name string) apisv1alpha1.BindingReference {
	return apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: path, Name: name}}
}

// boundAfter returns a bind function that leaves a binding in phase
// Binding until the nth GET, and Bound from then on; 0 binds it on create.
func boundAfter(n int) func(*apisv1alpha1.APIBinding, int) {
	return func(b *apisv1alpha1.APIBinding, gets int) {
		b.Status.Phase = apisv1alpha1.APIBindingPhaseBinding
		if gets >= n {
			b.Status.Phase = apisv1alpha1.APIBindingPhaseBound
		}
	}
}

// TestBind creates a binding to the wildwest export of kcp's quickstart and
// waits through two reads in phase Binding.
func TestBind(t *testing.T) {
	f := newFakeKCP(t)
	f.bind = boundAfter(3)
	kc := f.writeKubeconfig(t, "/clusters/"+consumer)

	out, errOut, code := run(t, kc, "apiexport", "root:wildwest:cowboys-service:wildwest.dev",
		"--accept-permission-claim", "configmaps.core", "--reject-permission-claim", "secrets.core")
	if code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", code, errOut)
	}
	want := "apibinding wildwest.dev created. Waiting to successfully bind ...\n" +
		"wildwest.dev created and bound.\n"
	if out != want {
		t.Errorf("stdout\n%s\nwant\n%s", out, want)
	}
	if _, gets := f.requests(); gets != 3 {
		t.Errorf("%d GETs of the binding, want 3 (bound on the third)", gets)
	}
	created := f.createdIn(consumer)
	if len(created) != 1 {
		t.Fatalf("%d creates in %s, want 1", len(created), consumer)
	}
	wantSpec := apisv1alpha1.APIBindingSpec{
		Reference: exportRefOf("root:wildwest:cowboys-service", "wildwest.dev"),
		PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{
			claim("", "configmaps", apisv1alpha1.ClaimAccepted),
			claim("", "secrets", apisv1alpha1.ClaimRejected),
		},
	}
	if created[0].Name != "wildwest.dev" {
		t.Errorf("binding name %q, want the export's name wildwest.dev", created[0].Name)
	}
	if diff := cmp.Diff(wantSpec, created[0].Spec); diff != "" {
		t.Errorf("created spec (-want +got):\n%s", diff)
	}
}

// TestBindRequest checks the APIBinding sent for arguments and flags. The
// server binds it on create, so no read follows.
func TestBindRequest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantName string
		wantSpec apisv1alpha1.APIBindingSpec
	}{{
		name:     "export of the current workspace",
		args:     []string{"cowboys"},
		wantName: "cowboys",
		wantSpec: apisv1alpha1.APIBindingSpec{Reference: exportRefOf("", "cowboys")},
	}, {
		name:     "binding name",
		args:     []string{"root:provider:cowboys", "--name", "my-cowboys"},
		wantName: "my-cowboys",
		wantSpec: apisv1alpha1.APIBindingSpec{Reference: exportRefOf("root:provider", "cowboys")},
	}, {
		name: "claims by commas and repeated flags, core and named groups, duplicates once",
		args: []string{"root:provider:cowboys",
			"--accept-permission-claim", "configmaps.core,widgets.example.com",
			"--accept-permission-claim", "configmaps.core",
			"--reject-permission-claim", "secrets.",
			"--reject-permission-claim", "deployments.apps"},
		wantName: "cowboys",
		wantSpec: apisv1alpha1.APIBindingSpec{
			Reference: exportRefOf("root:provider", "cowboys"),
			PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{
				claim("", "configmaps", apisv1alpha1.ClaimAccepted),
				claim("example.com", "widgets", apisv1alpha1.ClaimAccepted),
				claim("", "secrets", apisv1alpha1.ClaimRejected),
				claim("apps", "deployments", apisv1alpha1.ClaimRejected),
			},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeKCP(t)
			f.bind = boundAfter(0)
			kc := f.writeKubeconfig(t, "/clusters/"+consumer)

			out, errOut, code := run(t, kc, append([]string{"apiexport"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", code, errOut)
			}
			want := "apibinding " + tc.wantName + " created. Waiting to successfully bind ...\n" +
				tc.wantName + " created and bound.\n"
			if out != want {
				t.Errorf("stdout\n%s\nwant\n%s", out, want)
			}
			if _, gets := f.requests(); gets != 0 {
				t.Errorf("%d GETs of a binding bound on create, want 0", gets)
			}
			created := f.createdIn(consumer)
			if len(created) != 1 {
				t.Fatalf("%d creates in %s, want 1", len(created), consumer)
			}
			if created[0].Name != tc.wantName {
				t.Errorf("binding name %q, want %q", created[0].Name, tc.wantName)
			}
			if diff := cmp.Diff(tc.wantSpec, created[0].Spec); diff != "" {
				t.Errorf("created spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBindTimeout waits for a binding that never binds: the command fails
// after --timeout with the binding's phase and conditions.
func TestBindTimeout(t *testing.T) {
	f := newFakeKCP(t)
	f.bind = func(b *apisv1alpha1.APIBinding, gets int) {
		b.Status.Phase = apisv1alpha1.APIBindingPhaseBinding
		b.Status.Conditions = conditionsv1alpha1.Conditions{{
			Type:    apisv1alpha1.APIExportValid,
			Status:  corev1.ConditionFalse,
			Reason:  apisv1alpha1.APIExportNotFoundReason,
			Message: `APIExport "cowboys" not found in root:provider`,
		}, {
			Type:   apisv1alpha1.InitialBindingCompleted,
			Status: corev1.ConditionFalse,
			Reason: apisv1alpha1.WaitingForEstablishedReason,
		}}
	}
	kc := f.writeKubeconfig(t, "/clusters/"+consumer)

	start := time.Now()
	out, errOut, code := run(t, kc, "apiexport", "root:provider:cowboys", "--timeout", "300ms")
	elapsed := time.Since(start)
	if code == 0 {
		t.Fatalf("succeeded, want a timeout; stdout:\n%s", out)
	}
	if want := "apibinding cowboys created. Waiting to successfully bind ...\n"; out != want {
		t.Errorf("stdout\n%s\nwant\n%s", out, want)
	}
	wantErr := `error: could not bind cowboys: not bound within 300ms: phase Binding, conditions: ` +
		`APIExportValid=False (APIExportNotFound: APIExport "cowboys" not found in root:provider); ` +
		`InitialBindingCompleted=False (WaitingForEstablished)` + "\n"
	if errOut != wantErr {
		t.Errorf("stderr\n%s\nwant\n%s", errOut, wantErr)
	}
	if elapsed < 300*time.Millisecond {
		t.Errorf("gave up after %s, before the timeout", elapsed)
	}
	if _, gets := f.requests(); gets < 2 {
		t.Errorf("%d GETs of the binding while waiting, want it polled", gets)
	}
}

// TestBindWaitErrors checks how reads of the binding that fail end the
// wait: transient errors are retried, others end it.
func TestBindWaitErrors(t *testing.T) {
	unavailable := func(gets int) *apierrors.StatusError {
		if gets <= 2 {
			return apierrors.NewServiceUnavailable("shard restarting")
		}
		return nil
	}
	forbidden := func(int) *apierrors.StatusError {
		return apierrors.NewForbidden(apisv1alpha1.Resource("apibindings"), "cowboys", errors.New("user alice cannot get it"))
	}

	for _, tc := range []struct {
		name     string
		getError func(int) *apierrors.StatusError
		timeout  string
		wantOut  string
		wantErr  string // a substring of stderr; empty means success
	}{{
		name:     "unavailable, then bound",
		getError: unavailable,
		timeout:  "30s",
		wantOut:  "apibinding cowboys created. Waiting to successfully bind ...\ncowboys created and bound.\n",
	}, {
		name:     "unavailable until the timeout",
		getError: func(int) *apierrors.StatusError { return apierrors.NewServiceUnavailable("shard restarting") },
		timeout:  "200ms",
		wantOut:  "apibinding cowboys created. Waiting to successfully bind ...\n",
		wantErr:  "error: could not bind cowboys: not bound within 200ms: phase Binding, no conditions; last error: shard restarting",
	}, {
		name:     "forbidden",
		getError: forbidden,
		timeout:  "30s",
		wantOut:  "apibinding cowboys created. Waiting to successfully bind ...\n",
		wantErr:  `error: could not bind cowboys: apibindings.apis.kcp.io "cowboys" is forbidden: user alice cannot get it`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeKCP(t)
			f.bind = boundAfter(1)
			f.getError = tc.getError
			kc := f.writeKubeconfig(t, "/clusters/"+consumer)

			start := time.Now()
			out, errOut, code := run(t, kc, "apiexport", "root:provider:cowboys", "--timeout", tc.timeout)
			if out != tc.wantOut {
				t.Errorf("stdout\n%s\nwant\n%s", out, tc.wantOut)
			}
			switch {
			case tc.wantErr == "" && code != 0:
				t.Fatalf("exit code %d, stderr:\n%s", code, errOut)
			case tc.wantErr != "" && (code == 0 || !strings.HasPrefix(errOut, tc.wantErr)):
				t.Fatalf("exit code %d, stderr %q, want it to start with %q", code, errOut, tc.wantErr)
			}
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("took %s", elapsed)
			}
		})
	}
}

// TestBindArgumentErrors checks that bad arguments and flags fail before
// anything is sent.
func TestBindArgumentErrors(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{}, "the APIExport to bind is required as an argument"},
		{[]string{""}, "the APIExport to bind is required as an argument"},
		{[]string{"root:provider:"}, `invalid APIExport reference "root:provider:": the APIExport name after the last ':' is missing`},
		{[]string{":"}, `invalid APIExport reference ":": "" is not a workspace path`},
		{[]string{":cowboys"}, `invalid APIExport reference ":cowboys": "" is not a workspace path`},
		{[]string{"root:Provider:cowboys"}, `"root:Provider" is not a workspace path`},
		{[]string{"root::cowboys"}, `"root:" is not a workspace path`},
		{[]string{"a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"cowboys", "--accept-permission-claim", "configmaps"}, `invalid permission claim "configmaps": the format is <resource>.<group>`},
		{[]string{"cowboys", "--reject-permission-claim", ".core"}, `invalid permission claim ".core"`},
		{[]string{"cowboys", "--accept-permission-claim", "secrets.core", "--reject-permission-claim", "secrets."}, `permission claim "secrets." is both accepted and rejected`},
		{[]string{"cowboys", "--accept-all-permission-claims", "--reject-all-permission-claims"}, "cannot be used together"},
		{[]string{"cowboys", "--accept-all-permission-claims", "--reject-permission-claim", "secrets.core"}, "cannot be used with --accept-permission-claim or --reject-permission-claim"},
		{[]string{"cowboys", "--timeout", "soon"}, `invalid argument "soon" for "--timeout"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f := newFakeKCP(t)
			kc := f.writeKubeconfig(t, "/clusters/"+consumer)
			out, errOut, code := run(t, kc, append([]string{"apiexport"}, tc.args...)...)
			if code == 0 || !strings.HasPrefix(errOut, "error: ") || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("exit code %d, stderr %q, want \"error: ...%s...\"", code, errOut, tc.wantErr)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if creates, gets := f.requests(); creates+gets != 0 {
				t.Errorf("%d creates and %d GETs sent, want none", creates, gets)
			}
		})
	}
}

// TestBindAllClaims answers all claims of the export, read from its
// workspace, with --accept-all-permission-claims and
// --reject-all-permission-claims.
func TestBindAllClaims(t *testing.T) {
	exportClaims := []apisv1alpha1.PermissionClaim{
		{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true},
		{GroupResource: apisv1alpha1.GroupResource{Group: "wildwest.dev", Resource: "sheriffs"}, All: true, IdentityHash: "abc123"},
	}
	answered := func(state apisv1alpha1.AcceptablePermissionClaimState) []apisv1alpha1.AcceptablePermissionClaim {
		var out []apisv1alpha1.AcceptablePermissionClaim
		for _, c := range exportClaims {
			out = append(out, apisv1alpha1.AcceptablePermissionClaim{PermissionClaim: c, State: state})
		}
		return out
	}

	for _, tc := range []struct {
		name        string
		exportIn    string
		args        []string
		wantRef     apisv1alpha1.BindingReference
		wantClaims  []apisv1alpha1.AcceptablePermissionClaim
		wantErrText string
	}{{
		name:       "accept all of an export elsewhere",
		exportIn:   "root:provider",
		args:       []string{"root:provider:cowboys", "--accept-all-permission-claims"},
		wantRef:    exportRefOf("root:provider", "cowboys"),
		wantClaims: answered(apisv1alpha1.ClaimAccepted),
	}, {
		name:       "reject all of an export in the current workspace",
		exportIn:   consumer,
		args:       []string{"cowboys", "--reject-all-permission-claims"},
		wantRef:    exportRefOf("", "cowboys"),
		wantClaims: answered(apisv1alpha1.ClaimRejected),
	}, {
		name:        "export not found",
		exportIn:    "root:elsewhere",
		args:        []string{"root:provider:cowboys", "--accept-all-permission-claims"},
		wantErrText: `error: failed to get APIExport "cowboys" in "root:provider": apiexports.apis.kcp.io "cowboys" not found`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeKCP(t)
			f.bind = boundAfter(0)
			f.addExport(tc.exportIn, &apisv1alpha1.APIExport{
				ObjectMeta: metav1.ObjectMeta{Name: "cowboys"},
				Spec:       apisv1alpha1.APIExportSpec{PermissionClaims: exportClaims},
			})
			kc := f.writeKubeconfig(t, "/clusters/"+consumer)

			_, errOut, code := run(t, kc, append([]string{"apiexport"}, tc.args...)...)
			if tc.wantErrText != "" {
				if code == 0 || !strings.HasPrefix(errOut, tc.wantErrText) {
					t.Fatalf("exit code %d, stderr %q, want it to start with %q", code, errOut, tc.wantErrText)
				}
				if creates, _ := f.requests(); creates != 0 {
					t.Errorf("%d creates, want none", creates)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", code, errOut)
			}
			created := f.createdIn(consumer)
			if len(created) != 1 {
				t.Fatalf("%d creates in %s, want 1", len(created), consumer)
			}
			want := apisv1alpha1.APIBindingSpec{Reference: tc.wantRef, PermissionClaims: tc.wantClaims}
			if diff := cmp.Diff(want, created[0].Spec); diff != "" {
				t.Errorf("created spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBindServerErrors checks the errors of a create the server refuses
// and of a kubeconfig that does not point at a workspace.
func TestBindServerErrors(t *testing.T) {
	f := newFakeKCP(t)
	f.bind = boundAfter(0)
	kc := f.writeKubeconfig(t, "/clusters/"+consumer)

	if _, errOut, code := run(t, kc, "apiexport", "root:provider:cowboys"); code != 0 {
		t.Fatalf("first bind: exit code %d, stderr:\n%s", code, errOut)
	}
	out, errOut, code := run(t, kc, "apiexport", "root:provider:cowboys")
	wantErr := `error: failed to create APIBinding in "root:consumer": apibindings.apis.kcp.io "cowboys" already exists` + "\n"
	if code == 0 || errOut != wantErr || out != "" {
		t.Errorf("second bind: exit code %d, stdout %q, stderr %q; want stderr %q", code, out, errOut, wantErr)
	}

	base := f.writeKubeconfig(t, "")
	out, errOut, code = run(t, base, "apiexport", "root:provider:cowboys")
	wantErr = `error: current URL "` + f.srv.URL + `" is not a workspace URL` + "\n"
	if code == 0 || errOut != wantErr || out != "" {
		t.Errorf("base URL: exit code %d, stdout %q, stderr %q; want stderr %q", code, out, errOut, wantErr)
	}
}

func TestParseClaim(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    schema.GroupResource
		wantErr bool
	}{
		{in: "configmaps.core", want: schema.GroupResource{Resource: "configmaps"}},
		{in: "configmaps.", want: schema.GroupResource{Resource: "configmaps"}},
		{in: "deployments.apps", want: schema.GroupResource{Group: "apps", Resource: "deployments"}},
		{in: "cowboys.wildwest.dev", want: schema.GroupResource{Group: "wildwest.dev", Resource: "cowboys"}},
		{in: "configmaps", wantErr: true},
		{in: ".core", wantErr: true},
		{in: "", wantErr: true},
	} {
		got, err := parseClaim(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseClaim(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if gr := (schema.GroupResource{Group: got.Group, Resource: got.Resource}); gr != tc.want {
			t.Errorf("parseClaim(%q) = %v, want %v", tc.in, gr, tc.want)
		}
	}
}

func TestDescribeStatus(t *testing.T) {
	for _, tc := range []struct {
		status apisv1alpha1.APIBindingStatus
		want   string
	}{{
		want: "no phase yet, no conditions",
	}, {
		status: apisv1alpha1.APIBindingStatus{Phase: apisv1alpha1.APIBindingPhaseBinding, Conditions: conditionsv1alpha1.Conditions{
			{Type: apisv1alpha1.APIExportValid, Status: corev1.ConditionTrue},
			{Type: apisv1alpha1.BindingUpToDate, Status: corev1.ConditionUnknown, Message: "not checked yet"},
			{Type: apisv1alpha1.InitialBindingCompleted, Status: corev1.ConditionFalse, Reason: apisv1alpha1.NamingConflictsReason, Message: "cowboys.wildwest.dev is served by a CRD"},
		}},
		want: "phase Binding, conditions: APIExportValid=True; BindingUpToDate=Unknown (not checked yet); " +
			"InitialBindingCompleted=False (NamingConflicts: cowboys.wildwest.dev is served by a CRD)",
	}} {
		if got := describeStatus(&apisv1alpha1.APIBinding{Status: tc.status}); got != tc.want {
			t.Errorf("describeStatus = %q, want %q", got, tc.want)
		}
	}
}
