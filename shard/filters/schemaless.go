package filters

import "k8s.io/apimachinery/pkg/runtime/schema"

// schemaless is the group version errors are written in before a request is
// known to address an API group.
var schemaless = schema.GroupVersion{Version: "v1"}
