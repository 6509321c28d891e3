#!/usr/bin/env bash
# Generates Kruise's Go client (client/: clientset, listers, informers) from the API types with
# k8s.io/code-generator's client-gen, lister-gen and informer-gen (hack/tools.sh builds them).
# Usage: hack/clientgen.sh   (from `make generate`)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/bin"
APIS=github.com/kruise-ng/kruise/apis
OUT=github.com/kruise-ng/kruise/client
VERSIONS=(apps/v1alpha1 apps/v1beta1 policy/v1alpha1)
HEADER="$ROOT/hack/boilerplate.go.txt"

cd "$ROOT/client"
rm -rf clientset listers informers
# The generators load the API packages through the client module (which replaces apis with ../apis).
export GOFLAGS="${GOFLAGS:-} -mod=mod"
packages=()
for v in "${VERSIONS[@]}"; do packages+=("$APIS/$v"); done
"$BIN/client-gen" --go-header-file "$HEADER" --clientset-name versioned --input-base "$APIS" \
  --input "$(IFS=,; echo "${VERSIONS[*]}")" --output-dir clientset --output-pkg "$OUT/clientset"
"$BIN/lister-gen" --go-header-file "$HEADER" --output-dir listers --output-pkg "$OUT/listers" "${packages[@]}"
"$BIN/informer-gen" --go-header-file "$HEADER" --versioned-clientset-package "$OUT/clientset/versioned" \
  --listers-package "$OUT/listers" --output-dir informers --output-pkg "$OUT/informers" "${packages[@]}"
