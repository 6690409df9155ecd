package kcp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/pkg/cli/workspace"
)

// TestHelp checks that the help of kubectl kcp and its bind command lists
// their subcommands.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{args: []string{"--help"}, want: []string{"bind", "crd", "workload", "ws"}},
		{args: []string{"workload", "--help"}, want: []string{"sync ", "cordon ", "uncordon "}},
		{args: []string{"workload", "sync", "--help"}, want: []string{
			"kubectl kcp workload sync <sync-target-name> --syncer-image <image> -o <output-file> [flags]",
			"--apiexports strings", "[root:compute:kubernetes]", "--qps float32", "(default 20)", "--burst int", "(default 30)",
			"--downstream-namespace-clean-delay duration", "(default 30s)", "--kcp-namespace string", `(default "default")`,
		}},
		{args: []string{"bind", "--help"}, want: []string{"kubectl kcp bind [command]", "apiexport   Bind to an APIExport"}},
		{args: []string{"bind"}, want: []string{"apiexport   Bind to an APIExport"}},
		{args: []string{"bind", "apiexport", "--help"}, want: []string{
			"kubectl kcp bind apiexport [<workspace-path>:]<apiexport-name> [flags]",
			"--accept-permission-claim", "--reject-permission-claim", "--name", "--timeout duration", "(default 30s)",
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := NewCommand(workspace.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			cmd.SetArgs(tc.args)
			if code := workspace.Run(t.Context(), cmd); code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", code, errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("help does not contain %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestBindUnknownSubcommand(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := NewCommand(workspace.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"bind", "apiexports"})
	if code := workspace.Run(t.Context(), cmd); code == 0 {
		t.Fatalf("succeeded, want an error; stdout:\n%s", out.String())
	}
	if want := "error: unknown command \"apiexports\" for \"kubectl kcp bind\"\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}
