package serviceaccount

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// The claims of service account tokens are kcp's, so that kcp-aware tools
// can read them: upstream Kubernetes' claims plus the logical cluster.
//
// A bound token (TokenRequest) carries the registered claims and a private
// "kubernetes.io" object:
//
//	{"iss": "...", "sub": "system:serviceaccount:<ns>:<name>", "aud": [...],
//	 "exp": ..., "iat": ..., "nbf": ..., "jti": "...",
//	 "kubernetes.io": {"clusterName": "<cluster>", "namespace": "<ns>",
//	   "serviceaccount": {"name": "<name>", "uid": "<uid>"},
//	   "secret": {"name": "...", "uid": "..."}}}
//
// A legacy token (in a Secret of type kubernetes.io/service-account-token)
// is issued by LegacyIssuer, never expires and carries flat claims:
//
//	{"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:<ns>:<name>",
//	 "kubernetes.io/serviceaccount/namespace": "<ns>",
//	 "kubernetes.io/serviceaccount/secret.name": "<secret>",
//	 "kubernetes.io/serviceaccount/service-account.name": "<name>",
//	 "kubernetes.io/serviceaccount/service-account.uid": "<uid>",
//	 "kubernetes.io/serviceaccount/clusterName": "<cluster>"}

// LegacyIssuer is the issuer of legacy secret-based tokens, as in
// Kubernetes.
const LegacyIssuer = "kubernetes/serviceaccount"

// claims are the claims of bound and legacy tokens.
type claims struct {
	Issuer    string      `json:"iss,omitempty"`
	Subject   string      `json:"sub,omitempty"`
	Audience  audience    `json:"aud,omitempty"`
	Expiry    numericDate `json:"exp,omitempty"`
	NotBefore numericDate `json:"nbf,omitempty"`
	IssuedAt  numericDate `json:"iat,omitempty"`
	ID        string      `json:"jti,omitempty"`

	Kubernetes *privateClaims `json:"kubernetes.io,omitempty"`

	legacyClaims
}

// privateClaims are the "kubernetes.io" claims of bound tokens.
type privateClaims struct {
	// ClusterName is kcp's addition: the logical cluster of the service
	// account.
	ClusterName    string `json:"clusterName,omitempty"`
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount ref    `json:"serviceaccount"`
	// Secret is the object the token is bound to, if any.
	Secret *ref `json:"secret,omitempty"`
}

// ref names an object and its UID.
type ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// legacyClaims are the flat claims of legacy tokens.
type legacyClaims struct {
	LegacyNamespace          string `json:"kubernetes.io/serviceaccount/namespace,omitempty"`
	LegacySecretName         string `json:"kubernetes.io/serviceaccount/secret.name,omitempty"`
	LegacyServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name,omitempty"`
	LegacyServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid,omitempty"`
	// LegacyClusterName is kcp's addition.
	LegacyClusterName string `json:"kubernetes.io/serviceaccount/clusterName,omitempty"`
}

// audience is the "aud" claim: a string or an array of strings on the
// wire; always written as an array.
type audience []string

// UnmarshalJSON accepts a string or an array of strings.
func (a *audience) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return fmt.Errorf("aud must be a string or an array of strings: %w", err)
	}
	*a = many
	return nil
}

// numericDate is a JWT NumericDate: seconds since the epoch.
type numericDate int64

func newNumericDate(t time.Time) numericDate { return numericDate(t.Unix()) }

// Time returns the date as a time.Time.
func (d numericDate) Time() time.Time { return time.Unix(int64(d), 0) }

// UnmarshalJSON accepts integers and floats, as RFC 7519 allows.
func (d *numericDate) UnmarshalJSON(data []byte) error {
	var f float64
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("a NumericDate must be a number: %w", err)
	}
	if math.IsNaN(f) || f < 0 || f > math.MaxInt64/2 {
		return fmt.Errorf("NumericDate %v is out of range", f)
	}
	*d = numericDate(f)
	return nil
}
