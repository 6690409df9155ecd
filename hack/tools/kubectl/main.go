// Command kubectl is the upstream kubectl, built from Go modules for machines
// that have none (make builds it only when /usr/bin/kubectl is missing).
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		cmdutil.CheckErr(err)
	}
}
