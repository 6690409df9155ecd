package options

import (
	"strings"
	"testing"

	cliflag "k8s.io/component-base/cli/flag"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "minimal", args: []string{"--platform-kubeconfig=k", "--service-name=certs"}},
		{name: "missing", args: nil, want: []string{"--platform-kubeconfig is required", "--service-name is required"}},
		{name: "bad values", args: []string{"--platform-kubeconfig=k", "--service-name=certs", "--namespace=Not_A_Namespace", "--qps=0"},
			want: []string{`--namespace "Not_A_Namespace"`, "--qps, --burst and --workers must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			var fss cliflag.NamedFlagSets
			o.AddFlags(&fss)
			if err := fss.FlagSet("servlet").Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			completed, err := o.Complete()
			if err != nil {
				t.Fatal(err)
			}
			errs := completed.Validate()
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			all := strings.Join(msgs, "\n")
			if len(tt.want) == 0 && len(errs) > 0 {
				t.Errorf("Validate = %s, want nothing", all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("Validate = %q, lacks %q", all, w)
				}
			}
		})
	}
}
