// Command etcd is the upstream etcd server, built from Go modules for the e2e
// suite's local physical clusters (go install cannot build it: its go.mod has
// replace directives).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
