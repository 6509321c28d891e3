// Command kubectl-kruise is the kubectl plugin for Kruise workloads (pkg/app/cli): install it on PATH
// and run `kubectl kruise ...`.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kruise-ng/kruise/pkg/app/cli"
)

func main() {
	root := cli.NewRoot(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(cli.ExitCode(err))
	}
}
