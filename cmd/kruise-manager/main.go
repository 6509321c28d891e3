// Command kruise-manager runs Kruise's controllers and admission webhooks. This build provides the version
// only; the controllers arrive with the API and workload issues.
package main

import (
	"fmt"
	"os"

	"github.com/kruise-ng/kruise/pkg/version"
)

func main() {
	fmt.Println(version.String("kruise-manager"))
	os.Exit(0)
}
