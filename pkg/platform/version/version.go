package version

import (
	"fmt"
	"runtime"
)

// Version is the release of Kruise this binary was built from; "dev" for untagged builds.
// The Makefile sets it with -ldflags "-X github.com/kruise-ng/kruise/pkg/platform/version.Version=...".
var Version = "dev"

// Compatibility names the OpenKruise release whose API Kruise is wire-compatible with.
const Compatibility = "OpenKruise v1.9.0"

// String returns a one-line description: binary name, version, Go version and platform.
func String(binary string) string {
	return fmt.Sprintf("%s %s (API-compatible with %s; %s %s/%s)",
		binary, Version, Compatibility, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
