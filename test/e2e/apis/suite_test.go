// Package apise2e plays the quickstart of APIs as a service against the
// tessera process, as a provider and a consumer at their terminals do: the
// real kubectl with the kubectl ws and kubectl kcp plugins, and the
// apiexport virtual workspace of the shard.
package apise2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("apis")

func TestAPIs(t *testing.T) {
	framework.RunSuite(t, "APIs e2e")
}
