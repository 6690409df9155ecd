// Package plugin holds what several kubectl kcp commands share: APIExport
// references as kcp's plugins write them, kcp's short hashes for the names
// the plugins derive, and which server errors are worth a retry.
package plugin

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ExportRef is an APIExport reference, [<workspace path>:]<name>, parsed.
type ExportRef struct {
	// Path is the path of the APIExport's workspace; empty means the
	// current workspace.
	Path logicalcluster.Path
	Name string
}

// String returns the reference as it is written.
func (r ExportRef) String() string {
	if r.Path.Empty() {
		return r.Name
	}
	return r.Path.String() + logicalcluster.Separator + r.Name
}

// ExportRefFormat tells how an APIExport reference is written.
const ExportRefFormat = "the format is [<workspace-path>:]<apiexport-name>, e.g. root:my-service:my-export"

// ParseExportRef splits s at the last ':' into the path of the APIExport's
// workspace and its name. A name alone is an APIExport of the current
// workspace. The name is left for the server to check.
func ParseExportRef(s string) (ExportRef, error) {
	if s == "" {
		return ExportRef{}, errors.New("an APIExport reference is required; " + ExportRefFormat)
	}
	i := strings.LastIndex(s, logicalcluster.Separator)
	if i < 0 {
		return ExportRef{Name: s}, nil
	}
	path, name := s[:i], s[i+1:]
	if !logicalcluster.IsValidPath(path) {
		return ExportRef{}, fmt.Errorf("invalid APIExport reference %q: %q is not a workspace path; %s", s, path, ExportRefFormat)
	}
	if name == "" {
		return ExportRef{}, fmt.Errorf("invalid APIExport reference %q: the APIExport name after the last ':' is missing; %s", s, ExportRefFormat)
	}
	return ExportRef{Path: logicalcluster.NewPath(path), Name: name}, nil
}

// ShortHash returns the 8 characters kcp's plugins derive names from: the
// SHA-224 of s in lower-case base 36, a '0' for each leading zero byte of
// the hash (as github.com/martinlindhe/base36, which kcp uses, writes
// them), first 8 characters.
func ShortHash(s string) string {
	sum := sha256.Sum224([]byte(s))
	var b strings.Builder
	for _, c := range sum {
		if c != 0 {
			break
		}
		b.WriteByte('0')
	}
	var i big.Int
	i.SetBytes(sum[:])
	b.WriteString(i.Text(36))
	return b.String()[:8]
}

// IsRetryable tells whether an error is a transient condition of the
// server that a later read may not see.
func IsRetryable(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}
