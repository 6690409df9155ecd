// Package servlet is tessera-servlet: it runs on a service cluster and
// publishes some of that cluster's CustomResourceDefinitions into the
// platform as the APIs of a Service, then syncs the objects consumers make
// in their workspaces down to the service cluster and their status and
// related Secrets and ConfigMaps back (seed servlet-published-resources).
//
// Where the APIs come from:
//
//   - PublishedResource (services.kdp.k8c.io/v1alpha1, types in
//     pkg/apis/services) is a CRD on the service cluster; the servlet applies
//     it there when it starts (package crds).
//   - Service (core.kdp.k8c.io/v1alpha1, types in pkg/apis/kdpcore) is a
//     CRD in the service owner's platform workspace, since Tessera serves
//     CRDs per logical cluster. The servlet creates that CRD in its platform
//     workspace if it is missing; the owner then creates the Service, or
//     applies both with kubectl (syncer/servlet/crds/*.yaml).
//
// The pure rules of a PublishedResource (naming templates, projection,
// related references, validation) are in package published.
package servlet
