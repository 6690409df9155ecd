package certificatesigningrequests

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"
)

func TestPrepareForCreate(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme())
	ctx := genericapirequest.WithUser(t.Context(), &user.DefaultInfo{
		Name: "alice", UID: "u-1", Groups: []string{"devs"}, Extra: map[string][]string{"scope": {"a"}},
	})
	csr := newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
		c.Spec.Username = "mallory"
		c.Spec.Groups = []string{"system:masters"}
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{trueCondition(certificatesv1.CertificateApproved)}
	})
	strategy.PrepareForCreate(ctx, csr)
	if csr.Spec.Username != "alice" || csr.Spec.UID != "u-1" {
		t.Errorf("requester %q %q, want alice u-1", csr.Spec.Username, csr.Spec.UID)
	}
	if diff := cmp.Diff([]string{"devs"}, csr.Spec.Groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]certificatesv1.ExtraValue{"scope": {"a"}}, csr.Spec.Extra); diff != "" {
		t.Errorf("extra (-want +got):\n%s", diff)
	}
	if len(csr.Status.Conditions) != 0 {
		t.Errorf("created approved: %v", csr.Status.Conditions)
	}

	anonymous := newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Username = "mallory" })
	strategy.PrepareForCreate(t.Context(), anonymous)
	if anonymous.Spec.Username != "" {
		t.Errorf("username without a user: %q", anonymous.Spec.Username)
	}
}

func TestSubresourceStrategies(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme())
	approvedAt := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	old := newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: approvedAt, LastTransitionTime: approvedAt,
		}}
	})

	// The main resource keeps spec and status.
	main := old.DeepCopy()
	main.Spec.SignerName = "example.com/other"
	main.Status.Conditions = nil
	main.Labels = map[string]string{"a": "b"}
	strategy.PrepareForUpdate(t.Context(), main, old)
	if main.Spec.SignerName != old.Spec.SignerName || len(main.Status.Conditions) != 1 || main.Labels["a"] != "b" {
		t.Errorf("main update: %+v", main)
	}

	// Status keeps spec and Approved/Denied, and sets the rest.
	status := old.DeepCopy()
	status.Spec.ExpirationSeconds = ptr.To[int32](9999)
	status.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
		{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue},
		{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue},
	}
	status.Status.Certificate = []byte("cert")
	StatusStrategy{strategy}.PrepareForUpdate(t.Context(), status, old)
	var types []certificatesv1.RequestConditionType
	for _, c := range status.Status.Conditions {
		types = append(types, c.Type)
		if c.LastUpdateTime.IsZero() || c.LastTransitionTime.IsZero() {
			t.Errorf("condition %s has no times", c.Type)
		}
	}
	if diff := cmp.Diff([]certificatesv1.RequestConditionType{certificatesv1.CertificateFailed, certificatesv1.CertificateApproved}, types); diff != "" {
		t.Errorf("status conditions (-want +got):\n%s", diff)
	}
	if status.Spec.ExpirationSeconds != nil || string(status.Status.Certificate) != "cert" {
		t.Errorf("status update: %+v", status)
	}

	// Approval keeps everything but the conditions, and keeps transition
	// times of unchanged conditions.
	approval := old.DeepCopy()
	approval.Status.Certificate = []byte("cert")
	approval.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	ApprovalStrategy{strategy}.PrepareForUpdate(t.Context(), approval, old)
	if len(approval.Status.Certificate) != 0 {
		t.Error("approval set the certificate")
	}
	if got := approval.Status.Conditions[0].LastTransitionTime; !got.Equal(&approvedAt) {
		t.Errorf("lastTransitionTime %v, want %v", got, approvedAt)
	}
}

func TestDefaultsAndFieldLabels(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{
		Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved}, {Type: "Custom", Status: corev1.ConditionFalse}},
	}}
	s.Default(csr)
	if csr.Status.Conditions[0].Status != corev1.ConditionTrue || csr.Status.Conditions[1].Status != corev1.ConditionFalse {
		t.Errorf("defaulted conditions: %+v", csr.Status.Conditions)
	}
	gvk := certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest")
	if _, _, err := s.ConvertFieldLabel(gvk, "spec.signerName", "x"); err != nil {
		t.Errorf("spec.signerName: %v", err)
	}
	if _, _, err := s.ConvertFieldLabel(gvk, "spec.username", "x"); err == nil {
		t.Error("spec.username: want an error")
	}
	_, fieldSet, err := GetAttrs(newCSR(t))
	if err != nil {
		t.Fatal(err)
	}
	if fieldSet["spec.signerName"] != certificatesv1.KubeAPIServerClientSignerName || fieldSet["metadata.name"] != "alice" {
		t.Errorf("fields %v", fieldSet)
	}
}

func TestTableConvertor(t *testing.T) {
	tenDays := metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	pending := newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
		c.CreationTimestamp = tenDays
		c.Spec.Username = "alice"
	})
	issued := newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
		c.Name = "bob"
		c.CreationTimestamp = tenDays
		c.Spec.Username = "bob"
		c.Spec.ExpirationSeconds = ptr.To[int32](3600)
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{trueCondition(certificatesv1.CertificateApproved), trueCondition(certificatesv1.CertificateFailed)}
		c.Status.Certificate = []byte("x")
	})
	denied := newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
		c.Name = "eve"
		c.CreationTimestamp = tenDays
		c.Spec.SignerName = ""
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{trueCondition(certificatesv1.CertificateDenied)}
	})
	table, err := TableConvertor().ConvertToTable(t.Context(), &certificatesv1.CertificateSigningRequestList{Items: []certificatesv1.CertificateSigningRequest{*pending, *issued, *denied}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	want := [][]interface{}{
		{"alice", "10d", "kubernetes.io/kube-apiserver-client", "alice", "<none>", "Pending"},
		{"bob", "10d", "kubernetes.io/kube-apiserver-client", "bob", "60m", "Approved,Failed,Issued"},
		{"eve", "10d", "<none>", "", "<none>", "Denied"},
	}
	for i, row := range table.Rows {
		if diff := cmp.Diff(want[i], row.Cells); diff != "" {
			t.Errorf("row %d (-want +got):\n%s", i, diff)
		}
	}
}
