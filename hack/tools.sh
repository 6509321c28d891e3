#!/usr/bin/env bash
# Builds Kruise's pinned toolchain from source into bin/, keyed by version, building only what is
# missing. Usage: hack/tools.sh [tool...]   (no argument: every tool; the Makefile names the tools
# each target runs, e.g. `make demo` only the sandbox's)
#
# Order: the Kubernetes binaries share most of their packages, so they are built one after another
# in one lane (kube-apiserver first), each reusing the Go build cache of the ones before; two
# binaries compiling the same packages side by side would compile each package twice. The other
# tools (etcd, kwok, containerd, ...) share little with them (other versions of the k8s.io
# libraries) and build one by one beside that lane: at most TOOLS_JOBS builds at once (default 2:
# on 2 cores one build's module downloads and single-threaded link overlap the other's compile;
# TOOLS_JOBS=1 builds everything in turn). Each tool prints one line when it is built, with its
# own time and the time since the start.
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
CODE_GENERATOR_VERSION=v0.37.2  # client-gen, lister-gen, informer-gen: the Go client (client/), as k8s.io/* are pinned
STATICCHECK_VERSION=v0.8.2
GGCR_VERSION=v0.22.1         # go-containerregistry: the real node's in-memory registry; must match go.mod
CONTAINERD_VERSION=v2.4.2     # the real node's runtime (kruise-sandbox up --real-node)
HELM_VERSION=v3.22.0          # helm lint / helm template of charts/kruise, and the real node's Helm install
HELM_KUBE_MINOR=37            # helm v3.22.0's client-go is v0.37: its default Kubernetes is 1.37
KRUISE_ROLLOUT_VERSION=v0.6.3 # openkruise/rollouts: the e2e runs it on Kruise (test/e2e/kruise_rollouts_test.go)

# KUBE_TOOLS in build order: the control plane first, then kubectl, then kubelet (the real node's).
KUBE_TOOLS=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet)
OTHER_TOOLS=(etcd kwok registry containerd helm controller-gen staticcheck client-gen lister-gen informer-gen kruise-rollout)
ALL_TOOLS=("${KUBE_TOOLS[@]}" "${OTHER_TOOLS[@]}")

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

# build TOOL VERSION COMMAND...: runs COMMAND (which writes $out) into bin/tools/TOOL-VERSION/,
# then prints how long it took. The caller builds only tools that are missing.
build() {
  local tool=$1 version=$2; shift 2
  local dir="$BIN/tools/$tool-$version"
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

# kruise-rollout: openkruise/rollouts' manager, built in a copy of its module as released (its own
# go.mod and go.sum pin its dependencies; `go install pkg@version` would need the proxy's version
# list). Its CRDs (config/crd), webhook configurations (config/webhook) and the Lua scripts it
# reads from ./lua_configuration go beside it.
build_kruise_rollout() {
  local mod src dir; dir=$(dirname "$out")
  mod=$(go mod download -json "github.com/openkruise/rollouts@$KRUISE_ROLLOUT_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$mod" ]] || { echo "go mod download github.com/openkruise/rollouts@$KRUISE_ROLLOUT_VERSION: no Dir"; return 1; }
  src=$(mktemp -d)
  cp -r "$mod/." "$src" && chmod -R u+w "$src" &&
    (cd "$src" && GOFLAGS="$GOFLAGS -mod=mod" go build -ldflags "-s -w" -o "$out" .) &&
    rm -rf "$dir/crd" "$dir/webhook" "$dir/lua_configuration" &&
    cp -r "$src/config/crd" "$dir/crd" && cp -r "$src/config/webhook" "$dir/webhook" &&
      cp -r "$src/lua_configuration" "$dir/lua_configuration" &&
      # bin/ is inside Kruise's module: no Go file of theirs may land there (go vet ./... would see it).
      find "$dir/lua_configuration" -name '*.go' -delete
  local rc=$?; rm -rf "$src"; return $rc
}

link() { mkdir -p "$(dirname "$2")"; ln -sfn "$1" "$2"; }

version_of() {
  case "$1" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet) echo "$KUBE_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    kwok) echo "$KWOK_VERSION" ;;
    containerd) echo "$CONTAINERD_VERSION" ;;
    registry) echo "$GGCR_VERSION" ;;
    controller-gen) echo "$CONTROLLER_GEN_VERSION" ;;
    client-gen|lister-gen|informer-gen) echo "$CODE_GENERATOR_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    staticcheck) echo "$STATICCHECK_VERSION" ;;
    kruise-rollout) echo "$KRUISE_ROLLOUT_VERSION" ;;
  esac
}

present() { [[ -x "$BIN/tools/$1-$(version_of "$1")/$1" ]]; }

# link_tool TOOL: points bin/k8s/ (cluster binaries) or bin/ (developer tools) at TOOL's pinned version.
link_tool() {
  local t=$1 v; v=$(version_of "$1")
  case "$t" in
    controller-gen|helm|staticcheck|client-gen|lister-gen|informer-gen) link "tools/$t-$v/$t" "$BIN/$t" ;;
    containerd)
      link "../tools/$t-$v/$t" "$BIN/k8s/$t"
      link "../tools/$t-$v/containerd-shim-runc-v2" "$BIN/k8s/containerd-shim-runc-v2" ;;
    *) link "../tools/$t-$v/$t" "$BIN/k8s/$t" ;;
  esac
}

build_tool() {
  local t=$1 v; v=$(version_of "$1")
  case "$t" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet) build "$t" "$v" build_kube "$t" ;;
    etcd) build etcd "$v" build_etcd ;;
    kwok) build kwok "$v" build_install "sigs.k8s.io/kwok/cmd/kwok@$v" ;;
    containerd) build containerd "$v" build_containerd ;;
    registry) build registry "$v" build_install "github.com/google/go-containerregistry/cmd/registry@$v" ;;
    controller-gen) build controller-gen "$v" build_install "sigs.k8s.io/controller-tools/cmd/controller-gen@$v" ;;
    helm) build helm "$v" build_helm ;;
    staticcheck) build staticcheck "$v" build_install "honnef.co/go/tools/cmd/staticcheck@$v" ;;
    client-gen|lister-gen|informer-gen) build "$t" "$v" build_install "k8s.io/code-generator/cmd/$t@$v" ;;
    kruise-rollout) build kruise-rollout "$v" build_kruise_rollout ;;
  esac
  link_tool "$t"
}

# build_lane TOOL...: builds the tools one after another; stops at the first failure.
build_lane() {
  local t
  for t in "$@"; do build_tool "$t"; done
}

requested=("$@")
[[ ${#requested[@]} -gt 0 ]] || requested=("${ALL_TOOLS[@]}")
for t in "${requested[@]}"; do
  [[ " ${ALL_TOOLS[*]} " == *" $t "* ]] || { echo "hack/tools.sh: unknown tool '$t' (known: ${ALL_TOOLS[*]})" >&2; exit 2; }
done

# Split the requested tools, in ALL_TOOLS' order, into present ones and the missing ones of each lane.
have=(); kube=(); other=()
for t in "${ALL_TOOLS[@]}"; do
  [[ " ${requested[*]} " == *" $t "* ]] || continue
  if present "$t"; then
    have+=("$t"); link_tool "$t"
  elif [[ " ${KUBE_TOOLS[*]} " == *" $t "* ]]; then
    kube+=("$t")
  else
    other+=("$t")
  fi
done
if [[ ${#kube[@]} -eq 0 && ${#other[@]} -eq 0 ]]; then
  log "present in $BIN/tools: ${have[*]}"
  exit 0
fi
todo=("${kube[@]}" "${other[@]}")
log "building ${todo[*]} with Go $(go env GOVERSION) into $BIN/tools, a line per tool as it is done${have:+ (present: ${have[*]})}"

# Lanes: the Kubernetes binaries in one (they share a build cache, so never side by side), each
# other tool in its own; at most TOOLS_JOBS lanes run at once, the Kubernetes one (the longest) first.
lanes=()
[[ ${#kube[@]} -eq 0 ]] || lanes+=("${kube[*]}")
for t in "${other[@]}"; do lanes+=("$t"); done
jobs_max=${TOOLS_JOBS:-2}
pids=(); names=()
for lane in "${lanes[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do wait -n || true; done
  # shellcheck disable=SC2086 # a lane is a space-separated list of tool names
  build_lane $lane &
  pids+=($!); names+=("$lane")
done
failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" && continue
  for t in ${names[$i]}; do present "$t" || failed+=("$t"); done
done
if [[ ${#failed[@]} -gt 0 ]]; then
  log "FAILED, not built: ${failed[*]}"
  exit 1
fi
log "done"
