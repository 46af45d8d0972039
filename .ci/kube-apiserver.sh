# Sourced by .ci/run (and usable by hand: `source .ci/kube-apiserver.sh && kube_start`): the
# real kube-apiserver (v1.28.4 on etcd) of ../shared/tools/kube-apiserver/, on loopback, for the
# tests in tests/e2e/kubernetes/real_apiserver/. kube_start exports SKYPLAN_TEST_KUBECONFIG and
# prints how long the server took to become ready; kube_stop stops it.

# The tools sit beside the checkout (../shared); a clone made elsewhere finds them in /work.
kube_tools() {
  local beside
  beside="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared/tools/kube-apiserver"
  for dir in "${SKYPLAN_KUBE_TOOLS:-}" "$beside" /work/shared/tools/kube-apiserver; do
    if [ -n "$dir" ] && [ -x "$dir/start.sh" ]; then
      echo "$dir"
      return
    fi
  done
  echo "$beside"
}
KUBE_TOOLS="$(kube_tools)"

kube_install_if_missing() {
  if command -v etcd >/dev/null 2>&1; then
    return
  fi
  echo "etcd is missing: installing the etcd-server Debian package"
  apt-get update -qq || sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null ||
    DEBIAN_FRONTEND=noninteractive sudo apt-get install -y -qq etcd-server >/dev/null
}

kube_start() {
  if [ ! -x "$KUBE_TOOLS/start.sh" ]; then
    echo "no kube-apiserver tools at $KUBE_TOOLS (set SKYPLAN_KUBE_TOOLS)" >&2
    return 1
  fi
  kube_install_if_missing
  KUBE_TEST_DIR="$(mktemp -d /tmp/skyplan-kube.XXXXXX)"
  local started=$SECONDS
  "$KUBE_TOOLS/start.sh" "$KUBE_TEST_DIR" >/dev/null
  echo "kube-apiserver ready in $((SECONDS - started)) s ($KUBE_TEST_DIR)"
  export SKYPLAN_TEST_KUBECONFIG="$KUBE_TEST_DIR/kubeconfig"
}

kube_stop() {
  if [ -n "${KUBE_TEST_DIR:-}" ]; then
    "$KUBE_TOOLS/stop.sh" "$KUBE_TEST_DIR" || true
  fi
}
