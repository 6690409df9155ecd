package defaultnamespace

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestReconcile(t *testing.T) {
	for _, tc := range []struct {
		name       string
		st         state
		createErr  error
		wantCreate bool
		wantErr    bool
	}{
		{name: "ready without namespace", st: state{ready: true}, wantCreate: true},
		{name: "ready with namespace", st: state{ready: true, exists: true}},
		{name: "not ready", st: state{}},
		{name: "created meanwhile", st: state{ready: true}, createErr: apierrors.NewAlreadyExists(schema.GroupResource{Resource: "namespaces"}, Name), wantCreate: true},
		{name: "create fails", st: state{ready: true}, createErr: errors.New("boom"), wantCreate: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created := false
			_, err := reconcile(t.Context(), "c1",
				func(logicalcluster.Name) (state, error) { return tc.st, nil },
				func(context.Context, logicalcluster.Name) error { created = true; return tc.createErr })
			if created != tc.wantCreate || (err != nil) != tc.wantErr {
				t.Errorf("created=%v err=%v", created, err)
			}
		})
	}
}
