// Package published holds the pure logic of a PublishedResource: the
// naming templates of local copies, the projection of the CRD into the
// platform, the evaluation of related objects' references, and the
// validation whose message becomes the PublishedResource's Ready condition.
// Nothing here talks to a server.
package published
