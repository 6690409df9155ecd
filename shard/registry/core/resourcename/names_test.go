package resourcename

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidate(t *testing.T) {
	path := field.NewPath("x")
	tests := []struct {
		name                              corev1.ResourceName
		valid, validContainer, validQuota bool
	}{
		{name: "cpu", valid: true, validContainer: true, validQuota: true},
		{name: "hugepages-2Mi", valid: true, validContainer: true, validQuota: true},
		{name: "requests.hugepages-2Mi", valid: true, validQuota: true},
		{name: "pods", valid: true, validQuota: true},
		{name: "storage", valid: true},
		{name: "example.com/gpu", valid: true, validContainer: true, validQuota: true},
		{name: "count/deployments.apps", valid: true, validContainer: true, validQuota: true},
		{name: "gpu", valid: false},
		{name: "a/b/c", valid: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			if got := len(Validate(tt.name, path)) == 0; got != tt.valid {
				t.Errorf("Validate: valid %v, want %v", got, tt.valid)
			}
			if got := len(ValidateContainer(tt.name, path)) == 0; got != tt.validContainer {
				t.Errorf("ValidateContainer: valid %v, want %v", got, tt.validContainer)
			}
			if got := len(ValidateQuota(tt.name, path)) == 0; got != tt.validQuota {
				t.Errorf("ValidateQuota: valid %v, want %v", got, tt.validQuota)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	if !IsInteger("pods") || !IsInteger("example.com/gpu") || IsInteger("cpu") {
		t.Error("IsInteger")
	}
	if !IsOvercommitAllowed("cpu") || IsOvercommitAllowed("hugepages-1Gi") || IsOvercommitAllowed("example.com/gpu") {
		t.Error("IsOvercommitAllowed")
	}
	if IsExtended("kubernetes.io/x") || IsExtended("requests.example.com/x") || !IsExtended("example.com/x") {
		t.Error("IsExtended")
	}
}
