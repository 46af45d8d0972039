# Sourced by .ci/run (and usable by hand: `source .ci/kube-apiserver.sh && kube_start`): a real
# kube-apiserver on etcd, on loopback, for the tests in tests/e2e/kubernetes/real_apiserver/.
#
# Everything is built from Go modules of the Go module proxy — k8s.io/kubernetes for
# kube-apiserver and kubectl, go.etcd.io/etcd/server/v3 (the version Kubernetes itself requires)
# for etcd — into target/go-tools/kubernetes-$KUBE_VERSION/bin, so only the first run builds
# (about 5 minutes on 2 cores) and every later one finds the binaries.
#
# kube_build builds (or finds) them; kube_start starts etcd and the apiserver with a CA of its
# own, an admin client certificate (system:masters), RBAC and a service-account signing key (the
# TokenRequest API the in-cluster tests use), writes a kubeconfig with the context `real`,
# exports SKYPLAN_TEST_KUBECONFIG and puts the matching kubectl first on PATH; kube_stop stops
# both servers.

KUBE_VERSION="${KUBE_VERSION:-v1.37.2}"
KUBE_REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# SKYPLAN_GO_TOOLS lets a second checkout (a git worktree) share one cache.
KUBE_TOOLS="${SKYPLAN_GO_TOOLS:-$KUBE_REPO_ROOT/target/go-tools}/kubernetes-$KUBE_VERSION"

# The staging modules (k8s.io/api, k8s.io/apiserver, …) k8s.io/kubernetes replaces with its own
# directories: a module depending on it must replace each with the published v0.X.Y instead.
kube_write_module() {
  local module_dir="$1" gomod staging
  gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  staging="v0.${KUBE_VERSION#v1.}"
  mkdir -p "$module_dir"
  {
    echo "module skyplan.local/kube-tools"
    echo
    echo "go $(sed -n 's/^go \(.*\)$/\1/p' "$gomod")"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    echo "replace ("
    awk -v v="$staging" '$2 == "=>" && $3 ~ /^\.\/staging\// { print "\t" $1 " => " $1 " " v }' "$gomod"
    echo ")"
  } >"$module_dir/go.mod"
  cat >"$module_dir/tools.go" <<'EOF'
//go:build tools

// The programs .ci/kube-apiserver.sh builds; this file only pins them in go.mod.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
}

# The version a release build stamps (hack/lib/version.sh): without it the server and kubectl
# say v0.0.0-master, which clients cannot parse.
kube_version_ldflags() {
  local package flags=""
  for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags="$flags -X $package.gitVersion=$KUBE_VERSION -X $package.gitTreeState=clean"
    flags="$flags -X $package.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

kube_build() {
  if [ -x "$KUBE_TOOLS/bin/kube-apiserver" ] && [ -x "$KUBE_TOOLS/bin/kubectl" ] &&
    [ -x "$KUBE_TOOLS/bin/etcd" ]; then
    echo "kube-apiserver $KUBE_VERSION, kubectl and etcd found in $KUBE_TOOLS/bin (cached)"
    return
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "go is missing: kube-apiserver $KUBE_VERSION is built from Go modules" >&2
    return 1
  fi
  local started=$SECONDS
  kube_write_module "$KUBE_TOOLS/module" || return 1
  (
    cd "$KUBE_TOOLS/module" &&
      go mod tidy &&
      go build -buildvcs=false -trimpath -ldflags "$(kube_version_ldflags)" -o "$KUBE_TOOLS/bin.partial/" \
        k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl go.etcd.io/etcd/server/v3 &&
      mv "$KUBE_TOOLS/bin.partial/server" "$KUBE_TOOLS/bin.partial/etcd"
  ) || return 1
  rm -rf "$KUBE_TOOLS/bin"
  mv "$KUBE_TOOLS/bin.partial" "$KUBE_TOOLS/bin"
  echo "kube-apiserver $KUBE_VERSION, kubectl and etcd built from Go modules in $((SECONDS - started)) s"
}

# A free TCP port on loopback.
kube_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# X.509 v3 throughout (an -extfile makes openssl write v3): rustls refuses v1 certificates.
kube_certificates() {
  local dir="$1"
  (
    cd "$dir" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=skyplan-test-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null &&
      openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
        -keyout server.key -out server.csr 2>/dev/null &&
      printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n' >server.ext &&
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile server.ext -out server.crt 2>/dev/null &&
      openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=skyplan-admin" \
        -keyout admin.key -out admin.csr 2>/dev/null &&
      printf 'extendedKeyUsage=clientAuth\n' >admin.ext &&
      openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile admin.ext -out admin.crt 2>/dev/null &&
      openssl genrsa -out sa.key 2048 2>/dev/null &&
      openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
}

kube_write_kubeconfig() {
  local dir="$1" port="$2"
  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 <"$dir/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(base64 -w0 <"$dir/admin.crt")
    client-key-data: $(base64 -w0 <"$dir/admin.key")
contexts:
- name: real
  context:
    cluster: real
    user: admin
current-context: real
EOF
}

kube_start() {
  kube_build || return 1
  KUBE_TEST_DIR="$(mktemp -d /tmp/skyplan-kube.XXXXXX)"
  local dir="$KUBE_TEST_DIR" started=$SECONDS etcd_port peer_port api_port
  kube_certificates "$dir" || return 1
  etcd_port="$(kube_free_port)"
  peer_port="$(kube_free_port)"
  api_port="$(kube_free_port)"
  "$KUBE_TOOLS/bin/etcd" --data-dir "$dir/etcd" --name skyplan-test \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "skyplan-test=http://127.0.0.1:$peer_port" \
    >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"
  # No controller-manager runs beside it, so the endpoint reconciler is off (loopback is no
  # valid endpoint address) and nothing else reconciles: the tests make what they need.
  "$KUBE_TOOLS/bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$dir/server.crt" --tls-private-key-file "$dir/server.key" \
    --client-ca-file "$dir/ca.crt" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$dir/sa.pub" --service-account-signing-key-file "$dir/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --endpoint-reconciler-type none \
    >"$dir/kube-apiserver.log" 2>&1 &
  echo $! >"$dir/kube-apiserver.pid"
  kube_write_kubeconfig "$dir" "$api_port"
  export PATH="$KUBE_TOOLS/bin:$PATH"
  local tries=0
  until KUBECONFIG="$dir/kubeconfig" kubectl get --raw /readyz >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 120 ] || ! kill -0 "$(cat "$dir/kube-apiserver.pid")" 2>/dev/null; then
      echo "kube-apiserver did not become ready; its log ($dir/kube-apiserver.log) ends:" >&2
      tail -20 "$dir/kube-apiserver.log" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "kube-apiserver $KUBE_VERSION ready in $((SECONDS - started)) s ($dir)"
  export SKYPLAN_TEST_KUBECONFIG="$dir/kubeconfig"
}

kube_stop() {
  local dir="${KUBE_TEST_DIR:-}" name
  [ -n "$dir" ] || return 0
  for name in kube-apiserver etcd; do
    if [ -f "$dir/$name.pid" ]; then
      kill "$(cat "$dir/$name.pid")" 2>/dev/null || true
    fi
  done
}
