package options

import (
	"fmt"
	"os"
)

// RootShardName is the name of the shard that holds the root logical
// cluster (kcp's corev1alpha1.RootShard).
const RootShardName = "root"

// IsRoot tells whether the shard is the root shard of its installation:
// it has no --root-shard-kubeconfig-file, and it bootstraps the root
// logical cluster, its WorkspaceTypes, RBAC and kcp's APIExports.
func (o *Options) IsRoot() bool {
	return o.RootShardKubeconfigFile == ""
}

// validateJoin checks the flags of a shard joining an installation and of
// the installation's certificates.
//
// A shard is the root shard exactly when it has no
// --root-shard-kubeconfig-file, and the root shard is named root: kcp's
// clients find the root shard by that name. kcp itself accepts a shard
// with another name and no root kubeconfig (it then bootstraps a root
// logical cluster of its own); Tessera refuses it, as a second shard
// started without the flag would otherwise silently become a second,
// unrelated installation.
func (o *Options) validateJoin() []error {
	var errs []error
	switch {
	case o.IsRoot() && o.ShardName != RootShardName:
		errs = append(errs, fmt.Errorf("--shard-name %q requires --root-shard-kubeconfig-file: only the root shard starts without one, and it is named %q", o.ShardName, RootShardName))
	case !o.IsRoot() && o.ShardName == RootShardName:
		errs = append(errs, fmt.Errorf("--root-shard-kubeconfig-file is for shards joining an installation; such a shard needs a --shard-name other than %q", RootShardName))
	}
	if !o.IsRoot() {
		if _, err := os.Stat(o.RootShardKubeconfigFile); err != nil {
			errs = append(errs, fmt.Errorf("--root-shard-kubeconfig-file: %w", err))
		}
	}
	for _, pair := range []struct{ cert, key, certFlag, keyFlag string }{
		{o.TLSCertFile, o.TLSPrivateKeyFile, "--tls-cert-file", "--tls-private-key-file"},
		{o.InstallationCACertFile, o.InstallationCAKeyFile, "--installation-ca-cert-file", "--installation-ca-key-file"},
		{o.ShardClientCertFile, o.ShardClientKeyFile, "--shard-client-cert-file", "--shard-client-key-file"},
	} {
		if (pair.cert == "") != (pair.key == "") {
			errs = append(errs, fmt.Errorf("%s and %s go together", pair.certFlag, pair.keyFlag))
			continue
		}
		for flag, f := range map[string]string{pair.certFlag: pair.cert, pair.keyFlag: pair.key} {
			if f == "" {
				continue
			}
			if _, err := os.Stat(f); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", flag, err))
			}
		}
	}
	return errs
}
