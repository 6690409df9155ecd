package servercmd

import "strings"

// RootAtOrdinalZeroFlag is the flag of the shard and virtual workspace
// servers that lets one StatefulSet run the root shard and the others
// (the Helm chart's), so that a rolling update replaces one shard at a
// time across all of them.
const RootAtOrdinalZeroFlag = "root-at-ordinal-zero"

// RootAtOrdinalZeroUsage is the flag's help.
const RootAtOrdinalZeroUsage = "Run as a pod of one StatefulSet of all shards (the Helm chart's): when --shard-name is the StatefulSet's first pod (its name ends in -0), this is the root shard, named root, and --root-shard-kubeconfig-file is ignored; other pods keep their names and join root."

// AtOrdinalZero tells whether a pod name is the first pod of its
// StatefulSet (<statefulset>-0).
func AtOrdinalZero(podName string) bool {
	prefix, found := strings.CutSuffix(podName, "-0")
	return found && prefix != ""
}
