//go:build tools

package deps

import (
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/apiextensions-apiserver/pkg/apiserver"
	_ "k8s.io/apiserver/pkg/server"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/component-base/cli"
	_ "github.com/spf13/cobra"
)
