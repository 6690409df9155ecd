package authentication

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *Options)
	}{
		{name: "defaults", check: func(t *testing.T, o *Options) {
			if o.RequestHeader.ClientCAFile != "" || o.RequestHeader.UsernameHeaders[0] != "X-Remote-User" ||
				o.RequestHeader.GroupHeaders[0] != "X-Remote-Group" || o.RequestHeader.ExtraHeaderPrefixes[0] != "X-Remote-Extra-" {
				t.Errorf("request-header defaults %+v", o.RequestHeader)
			}
			if o.ServiceAccounts.Issuers[0] != DefaultIssuer || o.ServiceAccounts.MaxTokenExpiration != DefaultMaxTokenExpiration {
				t.Errorf("service account defaults %+v", o.ServiceAccounts)
			}
		}},
		{name: "issuers replace the default", args: []string{"--service-account-issuer=https://a", "--service-account-issuer=https://b"}, check: func(t *testing.T, o *Options) {
			if strings.Join(o.ServiceAccounts.Issuers, ",") != "https://a,https://b" {
				t.Errorf("issuers %q", o.ServiceAccounts.Issuers)
			}
		}},
		{name: "request-header flags", args: []string{"--requestheader-client-ca-file=/ca", "--requestheader-allowed-names=proxy", "--requestheader-uid-headers=X-Remote-Uid"}, check: func(t *testing.T, o *Options) {
			if o.RequestHeader.ClientCAFile != "/ca" || o.RequestHeader.AllowedNames[0] != "proxy" || o.RequestHeader.UIDHeaders[0] != "X-Remote-Uid" {
				t.Errorf("request-header options %+v", o.RequestHeader)
			}
		}},
		{name: "max expiration", args: []string{"--service-account-max-token-expiration=1h"}, check: func(t *testing.T, o *Options) {
			if o.ServiceAccounts.MaxTokenExpiration != time.Hour {
				t.Errorf("max expiration %s", o.ServiceAccounts.MaxTokenExpiration)
			}
		}},
		{name: "allowed names need a CA", args: []string{"--requestheader-allowed-names=proxy"}, wantErr: "requires --requestheader-client-ca-file"},
		{name: "no user headers", args: []string{"--requestheader-client-ca-file=/ca", "--requestheader-username-headers="}, wantErr: "username-headers"},
		{name: "legacy issuer", args: []string{"--service-account-issuer=kubernetes/serviceaccount"}, wantErr: "issuer of legacy tokens"},
		{name: "empty issuer", args: []string{"--service-account-issuer="}, wantErr: "must not be empty"},
		{name: "empty audience", args: []string{"--api-audiences=a,,b"}, wantErr: "empty audiences"},
		{name: "too short a maximum", args: []string{"--service-account-max-token-expiration=1m"}, wantErr: "must be 0 or at least 10m0s"},
		{name: "no maximum", args: []string{"--service-account-max-token-expiration=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			errs := o.Validate()
			var msgs []string
			for _, err := range errs {
				msgs = append(msgs, err.Error())
			}
			got := strings.Join(msgs, "; ")
			if tc.wantErr == "" && got != "" || !strings.Contains(got, tc.wantErr) {
				t.Errorf("Validate() = %q, want %q", got, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}
