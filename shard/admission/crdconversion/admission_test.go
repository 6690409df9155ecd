package crdconversion

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
)

func TestValidate(t *testing.T) {
	crd := func(strategy apiextensions.ConversionStrategyType) runtime.Object {
		c := &apiextensions.CustomResourceDefinition{}
		if strategy != "" {
			c.Spec.Conversion = &apiextensions.CustomResourceConversion{Strategy: strategy}
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		obj     runtime.Object
		wantErr bool
	}{
		{"no conversion", crd(""), false},
		{"none", crd(apiextensions.NoneConverter), false},
		{"webhook", crd(apiextensions.WebhookConverter), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := admission.NewAttributesRecord(tc.obj, nil, apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), "", "widgets.example.com",
				apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"), "", admission.Create, nil, false, nil)
			err := New().Validate(t.Context(), attrs, nil)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil && !apierrors.IsInvalid(err) {
				t.Errorf("want 422 Invalid, got %v", err)
			}
		})
	}
}
