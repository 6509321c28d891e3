#!/usr/bin/env bash
# Builds Kruise's pinned toolchain from source into bin/, keyed by version, building only what is
# missing. Usage: hack/tools.sh [tool...]   (no argument: every tool)
#
# Layout:
#   bin/tools/<tool>-<version>/<binary>   the built binaries, one folder per pinned version
#   bin/k8s/<binary>                      symlinks to the pinned versions of the cluster binaries
#                                         (KUBEBUILDER_ASSETS and the sandbox's default --bin-dir)
#   bin/<binary>                          symlinks for the developer tools (controller-gen, staticcheck)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/quiet.sh
source "$ROOT/hack/quiet.sh"
BIN="$ROOT/bin"

KUBE_VERSION=v1.37.2
ETCD_VERSION=v3.7.3          # must match hack/tools/etcd/go.mod
KWOK_VERSION=v0.8.0
CONTROLLER_GEN_VERSION=v0.23.0
STATICCHECK_VERSION=v0.8.2
GGCR_VERSION=v0.22.1         # go-containerregistry: the real node's in-memory registry; must match go.mod
CONTAINERD_VERSION=v2.4.2     # the real node's runtime (kruise-sandbox up --real-node)
HELM_VERSION=v3.22.0          # helm lint / helm template of charts/kruise, and the real node's Helm install
HELM_KUBE_MINOR=37            # helm v3.22.0's client-go is v0.37: its default Kubernetes is 1.37

ALL_TOOLS=(kube-apiserver etcd kube-controller-manager kube-scheduler kubectl kwok controller-gen staticcheck kubelet containerd registry helm)

export GOFLAGS="${GOFLAGS:-} -trimpath"
export CGO_ENABLED=0

started=$(date +%s)
log() { printf '[tools %4ss] %s\n' "$(( $(date +%s) - started ))" "$*"; }

kube_ldflags() {
  local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
  local flags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  echo "$flags"
}

# build TOOL VERSION DIR-RELATIVE-BINARY COMMAND...: runs COMMAND (which writes $out) unless the
# versioned binary already exists, then prints how long it took.
build() {
  local tool=$1 version=$2; shift 2
  local dir="$BIN/tools/$tool-$version"
  out="$dir/$tool"
  if [[ -x "$out" ]]; then
    log "$tool $version: present"
    return
  fi
  mkdir -p "$dir"
  local t0; t0=$(date +%s)
  local tmp="$dir/.$tool.tmp"
  out="$tmp"
  # The build's output (module downloads, compiler chatter) goes to a log, shown only on failure.
  if ! quietly "$dir/build.log" "$@"; then
    rm -f "$tmp"
    log "$tool $version: FAILED"
    exit 1
  fi
  mv -f "$tmp" "$dir/$tool"
  log "$tool $version: built in $(( $(date +%s) - t0 ))s"
}

build_kube() { (cd "$ROOT/hack/tools/kube" && go build -ldflags "$(kube_ldflags)" -o "$out" "k8s.io/kubernetes/cmd/$1"); }
build_etcd() { (cd "$ROOT/hack/tools/etcd" && go build -ldflags "-s -w" -o "$out" .); }
# containerd and its runc shim, without the snapshotters that need cgo or kernel features we skip.
build_containerd() {
  local gobin; gobin=$(mktemp -d)
  GOBIN="$gobin" go install -tags no_btrfs,no_devmapper,no_zfs -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION" &&
    mv "$gobin/containerd-shim-runc-v2" "$(dirname "$out")/containerd-shim-runc-v2" && mv "$gobin/containerd" "$out"
  local rc=$?; rm -rf "$gobin"; return $rc
}
# go install MODULE/CMD@VERSION into a scratch GOBIN, then move the binary to $out.
build_install() {
  local pkg=$1 name=${1##*/} gobin; gobin=$(mktemp -d)
  GOBIN="$gobin" go install -ldflags "-s -w" "$pkg" && mv "$gobin/${name%@*}" "$out"
  local rc=$?; rm -rf "$gobin"; return $rc
}

# helm, with the version and the default Kubernetes version (of its client-go, as helm's own
# Makefile sets them) that `helm template` assumes offline.
build_helm() {
  local gobin; gobin=$(mktemp -d)
  GOBIN="$gobin" go install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_KUBE_MINOR \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_KUBE_MINOR" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" && mv "$gobin/helm" "$out"
  local rc=$?; rm -rf "$gobin"; return $rc
}

link() { mkdir -p "$(dirname "$2")"; ln -sfn "$1" "$2"; }

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=("${ALL_TOOLS[@]}")
log "building into $BIN (Go $(go env GOVERSION)); tools: ${tools[*]}"
build_tool() {
  local t=$1
  case "$t" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet)
      build "$t" "$KUBE_VERSION" build_kube "$t"
      link "../tools/$t-$KUBE_VERSION/$t" "$BIN/k8s/$t" ;;
    etcd)
      build etcd "$ETCD_VERSION" build_etcd
      link "../tools/etcd-$ETCD_VERSION/etcd" "$BIN/k8s/etcd" ;;
    kwok)
      build kwok "$KWOK_VERSION" build_install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
      link "../tools/kwok-$KWOK_VERSION/kwok" "$BIN/k8s/kwok" ;;
    containerd)
      build containerd "$CONTAINERD_VERSION" build_containerd
      link "../tools/containerd-$CONTAINERD_VERSION/containerd" "$BIN/k8s/containerd"
      link "../tools/containerd-$CONTAINERD_VERSION/containerd-shim-runc-v2" "$BIN/k8s/containerd-shim-runc-v2" ;;
    registry)
      build registry "$GGCR_VERSION" build_install "github.com/google/go-containerregistry/cmd/registry@$GGCR_VERSION"
      link "../tools/registry-$GGCR_VERSION/registry" "$BIN/k8s/registry" ;;
    controller-gen)
      build controller-gen "$CONTROLLER_GEN_VERSION" build_install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"
      link "tools/controller-gen-$CONTROLLER_GEN_VERSION/controller-gen" "$BIN/controller-gen" ;;
    helm)
      build helm "$HELM_VERSION" build_helm
      link "tools/helm-$HELM_VERSION/helm" "$BIN/helm" ;;
    staticcheck)
      build staticcheck "$STATICCHECK_VERSION" build_install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
      link "tools/staticcheck-$STATICCHECK_VERSION/staticcheck" "$BIN/staticcheck" ;;
  esac
}

for t in "${tools[@]}"; do
  [[ " ${ALL_TOOLS[*]} " == *" $t "* ]] || { echo "hack/tools.sh: unknown tool '$t' (known: ${ALL_TOOLS[*]})" >&2; exit 2; }
done
# Build TOOLS_JOBS tools at once (default 2): a link step or a module download of one overlaps
# with the compile of another. Each build is independent; the Go build cache is shared safely.
jobs_max=${TOOLS_JOBS:-2}
pids=(); names=()
for t in "${tools[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do wait -n || true; done
  build_tool "$t" &
  pids+=($!); names+=("$t")
done
failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done
if [[ ${#failed[@]} -gt 0 ]]; then
  log "FAILED: ${failed[*]}"
  exit 1
fi
log "done"
