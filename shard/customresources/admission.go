package customresources

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
)

// forbidCreate refuses creates while the CRD is terminating, like upstream,
// and delegates everything else.
type forbidCreate struct {
	delegate admission.Interface
}

var (
	_ admission.MutationInterface   = forbidCreate{}
	_ admission.ValidationInterface = forbidCreate{}
)

// errTerminating explains the refusal.
var errTerminating = errors.New("create not allowed while custom resource definition is terminating")

func (f forbidCreate) Handles(op admission.Operation) bool {
	return op == admission.Create || f.delegate.Handles(op)
}

func (f forbidCreate) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetOperation() == admission.Create {
		return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errTerminating)
	}
	if m, ok := f.delegate.(admission.MutationInterface); ok {
		return m.Admit(ctx, a, o)
	}
	return nil
}

func (f forbidCreate) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetOperation() == admission.Create {
		return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errTerminating)
	}
	if v, ok := f.delegate.(admission.ValidationInterface); ok {
		return v.Validate(ctx, a, o)
	}
	return nil
}
