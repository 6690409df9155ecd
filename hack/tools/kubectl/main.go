// Command kubectl is the upstream kubectl, built from Go modules for machines
// that have none (make builds it only when /usr/bin/kubectl is missing).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	os.Exit(cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()))
}
