package published

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

func TestValidate(t *testing.T) {
	valid := func() *servicesv1alpha1.PublishedResource {
		return &servicesv1alpha1.PublishedResource{Spec: servicesv1alpha1.PublishedResourceSpec{
			Resource: servicesv1alpha1.SourceResourceDescriptor{APIGroup: "cert-manager.io", Version: "v1", Kind: "Certificate"},
			Naming:   &servicesv1alpha1.ResourceNaming{Namespace: "kube-system", Name: "$remoteClusterName-$remoteNamespaceHash-$remoteNameHash"},
			Filter: &servicesv1alpha1.ResourceFilter{Namespace: "my-app", Resource: &metav1.LabelSelector{
				MatchLabels: map[string]string{"foo": "bar"},
			}},
			Projection: &servicesv1alpha1.ResourceProjection{Version: "v1beta1", Kind: "Zertifikat", Plural: "Zertifikate", ShortNames: []string{"zerts"}},
			Related: []servicesv1alpha1.RelatedResourceSpec{{
				Identifier: "tls-secret", Origin: "service", Kind: "Secret",
				Reference: servicesv1alpha1.RelatedResourceReference{
					Name:      servicesv1alpha1.ResourceLocator{Path: "spec.secretName"},
					Namespace: &servicesv1alpha1.ResourceLocator{Path: "metadata.uid", Regex: &servicesv1alpha1.RegexResourceLocator{Replacement: "kube-system"}},
				},
			}},
		}}
	}
	tests := []struct {
		name   string
		mutate func(*servicesv1alpha1.PublishedResource)
		want   []string // substrings of the message; none for a valid spec
	}{
		{name: "the seed's example", mutate: func(*servicesv1alpha1.PublishedResource) {}},
		{name: "the simplest form, with default naming", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec = servicesv1alpha1.PublishedResourceSpec{Resource: pr.Spec.Resource}
		}},
		{name: "missing version and kind", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec.Resource = servicesv1alpha1.SourceResourceDescriptor{APIGroup: "cert-manager.io"}
		}, want: []string{"spec.resource.version: Required", "spec.resource.kind: Required"}},
		{name: "bad label selector", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec.Filter.Resource = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: "Near"}}}
		}, want: []string{"spec.filter.resource", `"Near" is not a valid label selector operator`}},
		{name: "bad filter namespace", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec.Filter.Namespace = "My_App"
		}, want: []string{"spec.filter.namespace"}},
		{name: "unknown placeholder", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec.Naming.Name = "$remoteNameHash-$remoteWorkspace"
		}, want: []string{"spec.naming.name", "unknown placeholder $remoteWorkspace"}},
		{name: "name template that does not tell objects apart", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec.Naming.Name = "cert-$remoteNamespaceHash"
		}, want: []string{"spec.naming.name", "all objects get the same name"}},
		{name: "namespace template expanding to an invalid namespace", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec.Naming.Namespace = "NS_$remoteClusterName"
		}, want: []string{"spec.naming.namespace", "expands to NS_1084s8ceexsehjm2"}},
		{name: "bad projection", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			pr.Spec.Projection = &servicesv1alpha1.ResourceProjection{Version: "V1", Kind: "zertifikat", ShortNames: []string{"z_z"}, Scope: "Global"}
		}, want: []string{"spec.projection.version", "spec.projection.kind", "spec.projection.shortNames[0]", "spec.projection.scope: Unsupported value: \"Global\""}},
		{name: "bad related objects", mutate: func(pr *servicesv1alpha1.PublishedResource) {
			r := pr.Spec.Related[0]
			r.Kind, r.Origin = "Pod", "elsewhere"
			r.Reference.Name = servicesv1alpha1.ResourceLocator{Path: "spec.secretName", Regex: &servicesv1alpha1.RegexResourceLocator{Pattern: "(["}}
			pr.Spec.Related = append(pr.Spec.Related, r)
		}, want: []string{"spec.related[1].identifier: Duplicate", "spec.related[1].kind: Unsupported", "spec.related[1].origin: Unsupported", "spec.related[1].reference.name.regex.pattern"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := valid()
			tt.mutate(pr)
			errs := Validate(pr)
			if len(tt.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("Validate = %v, want no errors", errs.ToAggregate())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("Validate found nothing wrong, want %q", tt.want)
			}
			msg := errs.ToAggregate().Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}
