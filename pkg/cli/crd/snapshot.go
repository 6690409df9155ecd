// Package crd is the kubectl kcp crd command: `crd snapshot` turns
// CustomResourceDefinitions into APIResourceSchemas, as kcp's does, so a
// provider can start from the CRDs it has.
package crd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

// NewCommand returns the crd command with its snapshot subcommand.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "crd",
		Short: "Work with CustomResourceDefinitions",
	}
	cmd.AddCommand(newSnapshotCommand())
	return cmd
}

type snapshotOptions struct {
	filename string
	prefix   string
	output   string
}

func newSnapshotCommand() *cobra.Command {
	o := &snapshotOptions{output: "yaml"}
	cmd := &cobra.Command{
		Use:   "snapshot -f FILE --prefix PREFIX",
		Short: "Turn CustomResourceDefinitions into APIResourceSchemas",
		Long: `Turn each CustomResourceDefinition of a file (or of stdin with -f -) into the
APIResourceSchema <prefix>.<plural>.<group> that defines the same resource,
and print them. APIResourceSchemas are immutable: take a new prefix (a date,
a version) for every change.`,
		Example: `  kubectl kcp crd snapshot -f cowboys-crd.yaml --prefix v220920-6039d110 | kubectl apply -f -`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&o.filename, "filename", "f", "", "file with the CustomResourceDefinitions to convert, - for stdin")
	cmd.Flags().StringVar(&o.prefix, "prefix", "", "prefix of the APIResourceSchemas' names, before <plural>.<group>")
	cmd.Flags().StringVarP(&o.output, "output", "o", o.output, "output format: yaml or json")
	return cmd
}

func (o *snapshotOptions) run(stdin io.Reader, out io.Writer) error {
	var errs []error
	if o.filename == "" {
		errs = append(errs, errors.New("--filename is required"))
	}
	if o.prefix == "" {
		errs = append(errs, errors.New("--prefix is required"))
	}
	mediaType := map[string]string{"yaml": runtime.ContentTypeYAML, "json": runtime.ContentTypeJSON}[o.output]
	if mediaType == "" {
		errs = append(errs, fmt.Errorf("--output %q: yaml or json", o.output))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	in := stdin
	if o.filename != "-" {
		f, err := os.Open(o.filename)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}

	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := apisv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	codecs := serializer.NewCodecFactory(scheme)
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	encoder := codecs.EncoderForVersion(info.Serializer, apisv1alpha1.SchemeGroupVersion)
	decoder := codecs.UniversalDecoder(apiextensionsv1.SchemeGroupVersion)

	docs := utilyaml.NewYAMLReader(bufio.NewReader(in))
	first := true
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", o.filename, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return fmt.Errorf("decoding %s: %w", o.filename, err)
		}
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return fmt.Errorf("%s holds a %T, not a CustomResourceDefinition", o.filename, obj)
		}
		schema, err := apisv1alpha1.SchemaFromCRD(crd, o.prefix)
		if err != nil {
			return fmt.Errorf("converting CustomResourceDefinition %s: %w", crd.Name, err)
		}
		encoded, err := runtime.Encode(encoder, schema)
		if err != nil {
			return err
		}
		if !first && o.output == "yaml" {
			if _, err := io.WriteString(out, "---\n"); err != nil {
				return err
			}
		}
		first = false
		if _, err := out.Write(encoded); err != nil {
			return err
		}
	}
	return nil
}
