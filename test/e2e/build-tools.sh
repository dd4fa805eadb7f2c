#!/usr/bin/env bash
# Builds the end-to-end control plane from the Go module proxy, in throwaway
# modules, into $OUT: kube-apiserver, kube-controller-manager and kubectl
# (Kubernetes $K8S_VERSION), Crossplane core ($XP_VERSION) with its CRDs and
# provider-kubernetes ($PK_VERSION) with its package's CRDs. Binaries that
# already exist for the same versions are kept: the cold build takes about
# 14 minutes on two cores, a cached one nothing.
#
# Usage: OUT=~/.cache/function-cluster-platform/e2e ./build-tools.sh
set -euo pipefail
OUT=${OUT:?where the binaries go}
K8S=${K8S_VERSION:-v1.35.1}
STAGING=${STAGING_VERSION:-v0.35.1}
XPV=${XP_VERSION:-v2.4.0}
# Crossplane v2.3.5 requires crossplane-runtime/v2 v2.3.4 and apis/v2 v2.3.5,
# whose .zip the module proxy refused (403) on 2026-12-02 and 2026-12-03: it
# is built with the previous patch of each, which the proxy serves (make e2e
# passed on it on 2026-12-02, docs/e2e.md). An XP_REPLACE of the caller's,
# even an empty one, wins.
if [ "$XPV" = v2.3.5 ] && [ -z "${XP_REPLACE+set}" ]; then
  XP_REPLACE="github.com/crossplane/crossplane-runtime/v2@v2.3.4=github.com/crossplane/crossplane-runtime/v2@v2.3.3 github.com/crossplane/crossplane/apis/v2@v2.3.5=github.com/crossplane/crossplane/apis/v2@v2.3.4"
fi
# v1.2.1 is the newest release whose dependencies the module proxy serves
# (2026-11-28: v1.3.1 needs github.com/nebius/gosdk v0.2.28, v1.4.x a
# crossplane-runtime/v2 v2.5.0-rc pseudo-version; both refused, 403; v1.4.1
# with that runtime replaced still needs crossplane/apis/v2 v2.4.1 and
# nebius/gosdk, of which no version is served; the same on 2026-11-29;
# on 2026-12-02 and 2026-12-03 nebius/gosdk v0.2.28's .mod is served, its
# .zip still refused).
PKV=${PK_VERSION:-v1.2.1}
B=${BUILD_DIR:-$OUT/build}
# The control plane's parts are test infrastructure, not what ships: they
# build with the machine's own Go (1.26 here), as they did before the
# function moved to go1.27.3 (the Makefile's GOTOOLCHAIN). E2E_GOTOOLCHAIN
# selects another, e.g. go1.27.3 for a provider-kubernetes that needs it.
export GOTOOLCHAIN=${E2E_GOTOOLCHAIN:-local}
mkdir -p "$OUT" "$B/k8s" "$B/xp" "$B/pk"
t0=$(date +%s)

# provider-kubernetes, the one provider that runs for real: the local API
# server plays every workload cluster. Stamped on its own, so that adding it
# does not rebuild the control plane.
pkstamp="$OUT/provider-kubernetes.version"
if ! { [ -f "$pkstamp" ] && [ "$(cat "$pkstamp")" = "$PKV" ] && [ -x "$OUT/provider-kubernetes" ] && [ -d "$OUT/provider-kubernetes-crds" ]; }; then
  cd "$B/pk"
  cat > go.mod <<MOD
module e2epkbuild

go 1.25.0

require github.com/crossplane-contrib/provider-kubernetes $PKV
MOD
  cat > tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
GO
  go mod tidy
  go build -ldflags "-s -w" -o "$OUT/provider-kubernetes" github.com/crossplane-contrib/provider-kubernetes/cmd/provider
  rm -rf "$OUT/provider-kubernetes-crds"
  cp -r "$(go env GOMODCACHE)/github.com/crossplane-contrib/provider-kubernetes@$PKV/package/crds" "$OUT/provider-kubernetes-crds"
  chmod -R u+w "$OUT/provider-kubernetes-crds"
  echo "$PKV" > "$pkstamp"
  echo "e2e tools: provider-kubernetes $PKV built ($(( $(date +%s) - t0 )) s)"
fi

# Kubernetes and Crossplane core are stamped apart too: a new Crossplane
# does not rebuild Kubernetes.
k8sstamp="$OUT/kubernetes.version"
xpstamp="$OUT/crossplane.version"

# Kubernetes: require k8s.io/kubernetes and replace every staging module
# with its published release.
build_kubernetes() {
cd "$B/k8s"
cat > go.mod <<MOD
module e2ek8sbuild

go 1.25.0

require k8s.io/kubernetes $K8S
MOD
for m in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider \
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api \
  cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms \
  kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
  mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller; do
  echo "replace k8s.io/$m => k8s.io/$m $STAGING" >> go.mod
done
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
go mod tidy
minor=$(echo "$K8S" | cut -d. -f2)
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
for c in kube-apiserver kube-controller-manager kubectl; do
  go build -ldflags "$LDF" -o "$OUT/$c" "k8s.io/kubernetes/cmd/$c"
  echo "e2e tools: $c built ($(( $(date +%s) - t0 )) s)"
done

echo "$K8S" > "$k8sstamp"
}

# Crossplane core and its CRDs.
build_crossplane() {
cd "$B/xp"
cat > go.mod <<MOD
module e2expbuild

go 1.25.9

require github.com/crossplane/crossplane/v2 $XPV
MOD
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
GO
# From v2.4.0 the apis module is replaced in crossplane's own go.mod, which
# dependents ignore: require it at the same version.
go mod download -json "github.com/crossplane/crossplane/v2@$XPV" >/dev/null
if grep -q 'crossplane/crossplane/apis/v2' "$(go env GOMODCACHE)/cache/download/github.com/crossplane/crossplane/v2/@v/$XPV.mod"; then
  go mod edit -require="github.com/crossplane/crossplane/apis/v2@$XPV"
fi
# XP_REPLACE (module@version=module@version ...) builds Crossplane with a
# dependency the module proxy refuses replaced by one it serves; the stamp
# records it, so such a build is never taken for the release itself.
for r in ${XP_REPLACE:-}; do go mod edit -replace="$r"; done
go mod tidy
go build -ldflags "-s -w -X github.com/crossplane/crossplane/v2/internal/version.version=$XPV" -o "$OUT/crossplane" github.com/crossplane/crossplane/v2/cmd/crossplane
rm -rf "$OUT/crossplane-crds"
cp -r "$(go env GOMODCACHE)/github.com/crossplane/crossplane/v2@$XPV/cluster/crds" "$OUT/crossplane-crds"
chmod -R u+w "$OUT/crossplane-crds"
echo "$XPV${XP_REPLACE:+ with $XP_REPLACE}" > "$xpstamp"
echo "e2e tools: Crossplane $XPV built ($(( $(date +%s) - t0 )) s)"
}

if [ -f "$k8sstamp" ] && [ "$(cat "$k8sstamp")" = "$K8S" ] && [ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/kube-controller-manager" ] && [ -x "$OUT/kubectl" ]; then
  echo "e2e tools: Kubernetes $K8S cached in $OUT"
else
  build_kubernetes
fi
if [ -f "$xpstamp" ] && [ "$(cat "$xpstamp")" = "$XPV${XP_REPLACE:+ with $XP_REPLACE}" ] && [ -x "$OUT/crossplane" ] && [ -d "$OUT/crossplane-crds" ]; then
  echo "e2e tools: Crossplane $XPV cached in $OUT"
else
  build_crossplane
fi
echo "e2e tools: ready in $(( $(date +%s) - t0 )) s -> $OUT (provider-kubernetes $PKV)"
