// Command kruise-daemon is Kruise's per-node agent (image pre-pull, container meta and recreate over CRI).
// This build provides the version only; the agent arrives with the daemon issue.
package main

import (
	"fmt"
	"os"

	"github.com/kruise-ng/kruise/pkg/version"
)

func main() {
	fmt.Println(version.String("kruise-daemon"))
	os.Exit(0)
}
