#!/usr/bin/env bash
# make e2e: a real control plane on loopback (etcd, kube-apiserver,
# kube-controller-manager for garbage collection, Crossplane core), the
# function reaching it over mTLS, the provider CRDs of ../shared/crds, our
# XRDs, Compositions and example EnvironmentConfigs; then the end-to-end
# driver (test/e2e): the cloud simulator and the scenarios. Everything
# is torn down by PID at the end, also on failure.
#
# Environment: E2E_CACHE (built control-plane binaries, kept between runs),
# E2E_WORK (state and logs), CRDS (provider CRDs), KEEP=1 to leave it running,
# FLEET=N to run the fleet of N XRs and its faults instead of the scenarios
# (make fleet), FLEET_TIMEOUT (30m) how long the fleet may take to be Ready,
# FLEET_FAULTS=0 to measure the fleet without injecting its faults after,
# FLEET_IDLE (e.g. 3m) to measure the fleet at rest once all are Ready,
# FLEET_REST_XP_ARGS flags Crossplane core is restarted with before that
# (last, so they win: e.g. its default circuit breaker, --circuit-breaker-burst=100
# --circuit-breaker-refill-rate=1 --circuit-breaker-cooldown=5m),
# XP_POLL and PK_POLL Crossplane's and provider-kubernetes's poll intervals,
# APISERVER_PROFILING=true to serve the API server's /debug/pprof (off by default),
# APISERVER_GOGC the API server's GOGC (Go's default, 100, when unset: a
# larger value trades memory for less CPU in its garbage collector),
# FN_ARGS more flags for the function (e.g. --ttl-converging=1m), XP_ARGS
# more flags for Crossplane core (default --max-reconcile-rate=10; set it
# empty for Crossplane's own default of 100),
# PORTAL_BROWSER=required to fail, not skip, the portal's page test when no
# Chromium is found (installed from Debian then, as root), E2E_ONLY to run
# only some scenarios (comma-separated: budget, gcp, aws, azure, legacy,
# portal, rollout, release; all by default), E2E_TIMEOUT how long each
# step of a scenario may take (5m; 8m on Crossplane v2.3), FLEET_ROLLOUT=0 to run the fleet
# without its rollout across waves, FLEET_ROLLOUT_TIMEOUT (20m) how long
# that rollout may take, FLEET_CONTROLLER_ARGS more flags for the fleet
# controller (function-cluster-platform fleet run).
# The script is one compound command, which bash reads whole before it runs
# any of it: a file edited during a long run (make fleet N=1000 takes hours)
# does not change what the run does next. bash reads a plain script as it
# goes, so an edit once broke such a run at its last line.
{
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/test/e2e
CACHE=${E2E_CACHE:-$HOME/.cache/function-cluster-platform/e2e}
WORK=${E2E_WORK:-$ROOT/_output/e2e}
CRDS=${CRDS:-$ROOT/../shared/crds}
KEEP=${KEEP:-}
FN_PORT=19443 XP_WEBHOOK_PORT=19444 FN2_PORT=19445
export KUBECONFIG=$WORK/kubeconfig
cd "$ROOT"
t0=$(date +%s.%N)
el() { printf '%.1f' "$(echo "$(date +%s.%N) - ${1:-$t0}" | bc)"; }
log() { echo "e2e [$(el) s] $*"; }
# established waits until every CRD is Established; a CRD created an
# instant ago has no conditions yet, which kubectl wait reports as an error.
established() {
  for _ in $(seq 1 60); do
    kubectl wait --for condition=Established crd --all --timeout=120s >/dev/null 2>&1 && return 0
    sleep 1
  done
  kubectl wait --for condition=Established crd --all --timeout=10s
}

# ---- prerequisites: etcd from Debian, the control plane from the module proxy
if ! command -v etcd >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing etcd-server"
    DEBIAN_FRONTEND=noninteractive apt-get install -y etcd-server >/dev/null 2>&1 || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y etcd-server >/dev/null; }
  else
    echo "e2e: etcd is missing: apt-get install etcd-server" >&2; exit 1
  fi
fi
command -v bc >/dev/null || { echo "e2e: bc is missing" >&2; exit 1; }
# The portal scenario drives its page in a headless Chromium.
if [ "${PORTAL_BROWSER:-}" = required ] && ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing chromium"
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null 2>&1 || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null; }
  else
    echo "e2e: chromium is missing and PORTAL_BROWSER=required: apt-get install chromium" >&2; exit 1
  fi
fi
OUT=$CACHE "$HERE/build-tools.sh"
PATH=$CACHE:$PATH
rm -rf "$WORK"; mkdir -p "$WORK/pki"
CGO_ENABLED=0 go build -o "$WORK/function" .
CGO_ENABLED=0 go build -o "$WORK/e2e" ./test/e2e

cleanup() {
  rc=$?
  if [ -n "$KEEP" ]; then log "KEEP=1: left running; PIDs in $WORK/*.pid, KUBECONFIG=$KUBECONFIG"; return; fi
  if [ $rc -ne 0 ]; then
    # The components' last lines, without the API server's storage-stats
    # chatter; then the driver's own last lines again, so that the failure
    # is what a log's tail shows.
    for f in portal fleet function provider-kubernetes crossplane kube-apiserver; do
      # grep finds no line in an empty log (the function's, when it
      # logged nothing): with pipefail that would end the cleanup here,
      # leaving the stack running.
      [ -f "$WORK/$f.log" ] && { echo "---- last lines of $f.log"; { grep -v '"Error getting keys"' "$WORK/$f.log" || true; } | tail -n 25; }
    done
    [ -f "$WORK/driver.log" ] && { echo "---- the driver's last lines (e2e FAILED)"; tail -n 15 "$WORK/driver.log"; }
  fi
  for p in portal fleet function function-r2 provider-kubernetes crossplane kcm kube-apiserver etcd; do
    [ -f "$WORK/$p.pid" ] || continue
    pid=$(cat "$WORK/$p.pid"); kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  log "torn down"
}
trap cleanup EXIT

# ---- PKI: a CA, the API server's certificate, a service account key, a token
cd "$WORK/pki"
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=e2e-ca -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > apiserver.ext
openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
echo "e2e-admin-token,admin,admin,system:masters" > tokens.csv
# The portal's own identity (no group), and two tenants, each in a group
# named after its namespace.
cat >> tokens.csv <<TOKENS
e2e-portal-token,portal,portal
e2e-alice-token,alice,alice,tenant-a
e2e-bob-token,bob,bob,tenant-b
TOKENS
# mTLS between Crossplane and the function: the function serves a
# certificate for 127.0.0.1 and trusts the CA that signed Crossplane's.
mkdir -p fn xp
mkcert() { # dir cn ext
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$1/tls.key" -out "$1/tls.csr" 2>/dev/null
  printf '%s\n' "$3" > "$1/ext.cnf"
  openssl x509 -req -in "$1/tls.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile "$1/ext.cnf" -out "$1/tls.crt" 2>/dev/null
  cp ca.crt "$1/ca.crt"
}
mkcert fn function $'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
# Crossplane's and provider-kubernetes's webhook servers, on loopback.
mkdir -p xpw pk
mkcert xpw crossplane-webhook $'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
mkcert pk provider-kubernetes $'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
mkcert xp crossplane $'subjectAltName=DNS:crossplane.crossplane-system\nextendedKeyUsage=clientAuth'
cd "$ROOT"

# ---- etcd and kube-apiserver
etcd --name e2e --data-dir "$WORK/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster e2e=http://127.0.0.1:2380 >"$WORK/etcd.log" 2>&1 </dev/null &
echo $! > "$WORK/etcd.pid"
P=$WORK/pki
# Every workload cluster is this one API server, and each AppEnvironment
# composes a Service in it: a /16 holds the Services of a fleet of
# thousands (a /24 ran out at N=1,000, whose 300 AppEnvironments want 300).
env ${APISERVER_GOGC:+GOGC=$APISERVER_GOGC} kube-apiserver --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --token-auth-file="$P/tokens.csv" --authorization-mode=RBAC \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc --service-cluster-ip-range=10.96.0.0/16 \
  --endpoint-reconciler-type=none --enable-priority-and-fairness=false --profiling="${APISERVER_PROFILING:-false}" \
  --cert-dir="$P" >"$WORK/kube-apiserver.log" 2>&1 </dev/null &
echo $! > "$WORK/kube-apiserver.pid"
cat > "$KUBECONFIG" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: $P/ca.crt
users:
- name: admin
  user:
    token: e2e-admin-token
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
KC
# The same API server as a workload cluster sees it: embedded CA.
sed "s|certificate-authority: .*|certificate-authority-data: $(base64 -w0 "$P/ca.crt")|" "$KUBECONFIG" > "$WORK/workload-kubeconfig"
for _ in $(seq 1 120); do kubectl get --raw /readyz >/dev/null 2>&1 && break; sleep 0.5; done
kubectl get --raw /readyz >/dev/null
log "control plane ready${APISERVER_GOGC:+ (the API server with GOGC=$APISERVER_GOGC)}"

# ---- Crossplane core, out of cluster, dialling functions with mTLS
kubectl apply --server-side -f "$CACHE/crossplane-crds" >/dev/null
established
kubectl create namespace crossplane-system >/dev/null
mkdir -p "$WORK/xpkg-cache" "$WORK/xfn-cache"
# The cloud simulator compresses the minutes of provider status updates of
# a whole stack into a second, far more watch events than an XR's circuit
# breaker lets through by default (burst 100, 1 per second, 5 minutes open).
# Crossplane re-checks every Usage each poll interval (XP_POLL): 10 s for
# the scenarios, which wait on it; its default of 1 m for a fleet, where a
# Usage check is two requests on each of thousands of Usages. (An XR it
# re-runs when a composed resource changes or the function's TTL runs out,
# which with realtime compositions takes the poll interval's place.)
# Started by a script of its own, which the fleet's faults run again.
XP_POLL=${XP_POLL:-$([ -n "${FLEET:-}" ] && [ -z "${SCENARIOS:-}" ] && echo 1m || echo 10s)}
# At most 10 reconciles at once per XR kind, not Crossplane's 100: more
# than this API server on two cores serves, whose watches then lag, so that
# Crossplane reconciles XRs from stale copies and writes their old
# conditions back (docs/e2e.md, "Reconciles of stale copies").
XP_ARGS=${XP_ARGS---max-reconcile-rate=10}
# Crossplane core runs out of cluster as the admin user of $KUBECONFIG
# (tokens.csv: group system:masters), named here so that the fleet's
# faults, which run this script again, start it as the same user. A
# gated Cluster requires its rollout ruling, a ConfigMap in
# crossplane-system, which Crossplane reads and watches as that user
# (checked below, once the namespace exists); an install's Crossplane
# needs a ClusterRole for ConfigMaps aggregated to its own
# (docs/rollouts.md).
cat > "$WORK/start-crossplane.sh" <<SH
#!/usr/bin/env bash
KUBECONFIG="$KUBECONFIG" PATH=$CACHE:\$PATH crossplane core start --enable-webhooks --webhook-port=$XP_WEBHOOK_PORT --tls-server-certs-dir="$P/xpw" --package-runtime=External \\
  --tls-client-certs-dir="$P/xp" --xpkg-cache-dir="$WORK/xpkg-cache" --xfn-cache-dir="$WORK/xfn-cache" \\
  --metrics-port=18080 --health-probe-port=18081 --poll-interval=$XP_POLL \\
  --circuit-breaker-burst=2000 --circuit-breaker-refill-rate=50 --circuit-breaker-cooldown=5s $XP_ARGS \${XP_REST_ARGS:-} \\
  >>"$WORK/crossplane.log" 2>&1 </dev/null &
echo \$! > "$WORK/crossplane.pid"
SH
chmod +x "$WORK/start-crossplane.sh"; "$WORK/start-crossplane.sh"
for _ in $(seq 1 120); do curl -sf http://127.0.0.1:18081/readyz >/dev/null 2>&1 && break; sleep 0.5; done
curl -sf http://127.0.0.1:18081/readyz >/dev/null
# The one webhook of Crossplane's that matters here: deleting a resource
# in use by a Usage is refused (and replayed once the Usage goes). The
# Helm chart would point it at the webhook Service; here at loopback.
cat <<WH | kubectl apply -f - >/dev/null
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: crossplane-no-usages
webhooks:
- name: nousages.protection.crossplane.io
  admissionReviewVersions: [v1]
  clientConfig:
    url: https://127.0.0.1:$XP_WEBHOOK_PORT/validate-no-usages
    caBundle: $(base64 -w0 "$P/ca.crt")
  failurePolicy: Fail
  objectSelector: {matchLabels: {crossplane.io/in-use: "true"}}
  rules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [DELETE], resources: ["*"]}]
  sideEffects: None
WH
log "crossplane core ready, with its Usage webhook"
for verb in get list watch; do
  [ "$(kubectl auth can-i "$verb" configmaps --namespace=crossplane-system)" = yes ] ||
    { echo "e2e: Crossplane core's user may not $verb ConfigMaps in crossplane-system: it cannot read the rollout rulings" >&2; exit 1; }
done

# ---- the function, with mTLS (never --insecure), registered by hand;
# provider-kubernetes's webhook server holds 9443.
cat > "$WORK/start-function.sh" <<SH
#!/usr/bin/env bash
"$WORK/function" --address=127.0.0.1:$FN_PORT --tls-certs-dir="$P/fn" --metrics-address=127.0.0.1:18090 ${FN_ARGS:-} \\
  >>"$WORK/function.log" 2>&1 </dev/null &
echo \$! > "$WORK/function.pid"
SH
chmod +x "$WORK/start-function.sh"; "$WORK/start-function.sh"
kubectl apply -f "$HERE/manifests/functionrevision.yaml" >/dev/null
kubectl patch functionrevision function-cluster-platform-e2e --subresource=status --type=merge \
  -p "{\"status\":{\"endpoint\":\"127.0.0.1:$FN_PORT\",\"capabilities\":[\"composition\"]}}" >/dev/null
log "function serving over mTLS and registered"
if [ -z "${FLEET:-}" ] || [ -n "${SCENARIOS:-}" ]; then
  # The release scenario's platform releases r2 and r3: two more Functions
  # (function-cluster-platform-r2 and -r3), served by a second process of
  # the same binary, as a platform team installs a new release's Function
  # beside the current one.
  cat > "$WORK/start-function-r2.sh" <<SH
#!/usr/bin/env bash
"$WORK/function" --address=127.0.0.1:$FN2_PORT --tls-certs-dir="$P/fn" --metrics-address=127.0.0.1:18091 ${FN_ARGS:-} \\
  >>"$WORK/function-r2.log" 2>&1 </dev/null &
echo \$! > "$WORK/function-r2.pid"
SH
  chmod +x "$WORK/start-function-r2.sh"; "$WORK/start-function-r2.sh"
  for r in r2 r3; do
    sed -e "s/name: function-cluster-platform-e2e/name: function-cluster-platform-$r-e2e/" \
      -e "s/pkg.crossplane.io\/package: function-cluster-platform$/pkg.crossplane.io\/package: function-cluster-platform-$r/" \
      "$HERE/manifests/functionrevision.yaml" | kubectl apply -f - >/dev/null
    kubectl patch functionrevision "function-cluster-platform-$r-e2e" --subresource=status --type=merge \
      -p "{\"status\":{\"endpoint\":\"127.0.0.1:$FN2_PORT\",\"capabilities\":[\"composition\"]}}" >/dev/null
  done
  log "releases r2 and r3 registered as two more Functions, served on 127.0.0.1:$FN2_PORT"
fi

# ---- provider CRDs, our APIs, the example environment
# provider-kubernetes runs, so its kinds come from its own package (which
# has its ProviderConfigUsages too); the other providers' from ../shared/crds.
"$WORK/e2e" -prepare-crds="$CRDS" -out="$WORK/crds" -providers=gcp,aws,azure,helm,sql
mkdir -p "$WORK/pkcrds"; cp -r "$CACHE/provider-kubernetes-crds" "$WORK/pkcrds/kubernetes"
"$WORK/e2e" -prepare-crds="$WORK/pkcrds" -out="$WORK/crds" -providers=kubernetes
for d in gcp aws azure helm kubernetes sql; do kubectl apply --server-side -f "$WORK/crds/$d" >/dev/null; done
established
log "provider CRDs installed"

# ---- provider-kubernetes for real, against this API server, which also
# plays every workload cluster the XRs create.
# It re-reads what it applied every PK_POLL: 5 s for the scenarios, which
# wait on Deployments becoming available; 15 s for a fleet's thousands.
PK_POLL=${PK_POLL:-$([ -n "${FLEET:-}" ] && [ -z "${SCENARIOS:-}" ] && echo 15s || echo 5s)}
TLS_SERVER_CERTS_DIR="$P/pk" provider-kubernetes --health-probe-bind-addr=127.0.0.1:18083 --poll="$PK_POLL" \
  >"$WORK/provider-kubernetes.log" 2>&1 </dev/null &
echo $! > "$WORK/provider-kubernetes.pid"
for _ in $(seq 1 120); do curl -sf http://127.0.0.1:18083/readyz >/dev/null 2>&1 && break; sleep 0.5; done
curl -sf http://127.0.0.1:18083/readyz >/dev/null
# The ProviderConfig a standalone WorkloadBudget uses by default.
kubectl -n crossplane-system create secret generic local-kubeconfig --from-file=kubeconfig="$WORK/workload-kubeconfig" >/dev/null
kubectl apply -f - >/dev/null <<PC
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: ClusterProviderConfig
metadata:
  name: default
spec:
  credentials:
    source: Secret
    secretRef: {namespace: crossplane-system, name: local-kubeconfig, key: kubeconfig}
PC
log "provider-kubernetes $(cat "$CACHE/provider-kubernetes.version") ready"
kubectl apply -f apis/cluster/ -f apis/cluster-legacy/ -f apis/database/ -f apis/database-legacy/ -f apis/appenvironment/ -f apis/appenvironment-legacy/ -f apis/budget/ >/dev/null
kubectl wait xrd --all --for condition=Established --timeout=120s >/dev/null
for crd in clusters.platform.example.org xclusters.legacy.platform.example.org databases.platform.example.org xdatabases.legacy.platform.example.org \
  appenvironments.platform.example.org xappenvironments.legacy.platform.example.org workloadbudgets.platform.example.org; do
  for _ in $(seq 1 120); do kubectl get crd "$crd" >/dev/null 2>&1 && break; sleep 0.5; done
done
established
kubectl apply -f examples/envconfigs/ >/dev/null
for ns in platform team-a; do kubectl create namespace "$ns" >/dev/null; done
kubectl apply -f examples/spend/ >/dev/null
log "XRDs, Compositions and EnvironmentConfigs installed"

# ---- the fleet controller (internal/fleet): it rules on every Cluster a
# rollout wave gates, writing each ruling to a ConfigMap in
# crossplane-system that the Cluster requires by name; without it the
# gated Clusters hold. As the admin user, one replica without leader
# election, deciding every second. Started by a script of its own, which
# the rollout scenario runs again after stopping it (a gate that fails
# closed).
cat > "$WORK/start-fleet.sh" <<SH
#!/usr/bin/env bash
"$WORK/function" fleet run --kubeconfig="$KUBECONFIG" --namespace=crossplane-system --leader-elect=false --interval=1s ${FLEET_CONTROLLER_ARGS:-} \\
  >>"$WORK/fleet.log" 2>&1 </dev/null &
echo \$! > "$WORK/fleet.pid"
SH
chmod +x "$WORK/start-fleet.sh"; "$WORK/start-fleet.sh"
sleep 1
kill -0 "$(cat "$WORK/fleet.pid")" 2>/dev/null || { echo "e2e: the fleet controller did not start:" >&2; cat "$WORK/fleet.log" >&2; exit 1; }
log "fleet controller running (function-cluster-platform fleet run)"

# kube-controller-manager garbage-collects composed resources of a deleted
# XR, and runs the workload clusters' Deployments and ReplicaSets; started
# after the XRs' kinds exist, so that it watches them at once.
kube-controller-manager --kubeconfig="$KUBECONFIG" --controllers=garbagecollector,namespace,deployment,replicaset,serviceaccount \
  --leader-elect=false --secure-port=0 >"$WORK/kcm.log" 2>&1 </dev/null &
echo $! > "$WORK/kcm.pid"
log "stack up; running the scenarios"

if [ -z "${FLEET:-}" ] || [ -n "${SCENARIOS:-}" ]; then
  # ---- the self-service portal, for its scenario: the API server checks the
  # whole of examples/install/portal/portal.yaml; its ClusterRoles and Role are
  # applied as they are, bound to the user portal (tokens.csv) rather than
  # to the ServiceAccount; each tenant's group may edit AppEnvironments in
  # its namespace (appenvironment-editor); tenant-a gets the example policy.
  kubectl apply --dry-run=server -f examples/install/portal/portal.yaml >/dev/null
  "$WORK/e2e" -portal-rbac=examples/install/portal/portal.yaml -portal-user=portal | kubectl apply -f - >/dev/null
  for t in tenant-a tenant-b; do
    kubectl create namespace "$t" >/dev/null
    kubectl -n "$t" create rolebinding appenvironment-editors --clusterrole=appenvironment-editor --group="$t" >/dev/null
  done
  sed -e 's/^  name: portal-policy-team-a$/  name: portal-policy-tenant-a/' -e 's/^    domain: team-a\.apps\.example\.com$/    domain: tenant-a.apps.example.com/' \
    examples/install/portal/policy.yaml | kubectl apply -f - >/dev/null
  kubectl -n crossplane-system get configmap portal-policy-tenant-a >/dev/null
  sed 's/token: e2e-admin-token/token: e2e-portal-token/' "$KUBECONFIG" > "$WORK/portal-kubeconfig"
  "$WORK/function" portal --address=127.0.0.1:18100 --kubeconfig="$WORK/portal-kubeconfig" --policy-namespace=crossplane-system \
    >"$WORK/portal.log" 2>&1 </dev/null &
  echo $! > "$WORK/portal.pid"
  for _ in $(seq 1 60); do curl -sf http://127.0.0.1:18100/healthz >/dev/null 2>&1 && break; sleep 0.5; done
  curl -sf http://127.0.0.1:18100/healthz >/dev/null
  log "portal serving on 127.0.0.1:18100 as the user portal with the roles of examples/install/portal/portal.yaml"

  # Each step of a scenario may take E2E_TIMEOUT: 5 minutes, 8 on
  # Crossplane v2.3, which does not watch EnvironmentConfigs, so that a
  # Ready Cluster sees a new version only at its ready TTL (5 minutes).
  case "${XP_VERSION:-}" in v2.3.*) step=8m ;; *) step=5m ;; esac
  "$WORK/e2e" -kubeconfig="$KUBECONFIG" -examples=examples -only="${E2E_ONLY:-}" -work="$WORK" -timeout="${E2E_TIMEOUT:-$step}" -tokens="$P/tokens.csv" -portal-screenshot="$WORK/portal.png" 2>&1 | tee "$WORK/driver.log"
fi
if [ -n "${FLEET:-}" ]; then
  log "the fleet: $FLEET XRs"
  "$WORK/e2e" -kubeconfig="$KUBECONFIG" -examples=examples -fleet="$FLEET" -work="$WORK" -timeout="${FLEET_TIMEOUT:-30m}" -idle="${FLEET_IDLE:-0}" -rest-xp-args="${FLEET_REST_XP_ARGS:-}" -faults="${FLEET_FAULTS:-1}" \
    -rollout="${FLEET_ROLLOUT:-1}" -rollout-timeout="${FLEET_ROLLOUT_TIMEOUT:-20m}" 2>&1 | tee -a "$WORK/driver.log"
fi
log "done"
exit
}
