package server

import (
	"strings"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/component-base/compatibility"
)

// effectiveVersion reports the Kubernetes version the shard serves when the
// binary was built without version ldflags.
type effectiveVersion struct {
	compatibility.MutableEffectiveVersion
}

func (v effectiveVersion) Info() *apimachineryversion.Info {
	info := v.MutableEffectiveVersion.Info()
	if info != nil && (info.GitVersion == "" || strings.HasPrefix(info.GitVersion, "v0.0.0")) {
		info.GitVersion = "v" + KubernetesVersion + "+tessera"
	}
	return info
}
