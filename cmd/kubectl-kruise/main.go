// Command kubectl-kruise is the kubectl plugin for Kruise workloads. This build provides the version only;
// the commands arrive with the CLI issue.
package main

import (
	"fmt"
	"os"

	"github.com/kruise-ng/kruise/pkg/version"
)

func main() {
	fmt.Println(version.String("kubectl-kruise"))
	os.Exit(0)
}
