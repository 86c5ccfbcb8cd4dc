#!/usr/bin/env bash
# Starts the real kube-apiserver (target/servers/kube-apiserver, built by
# servers/build.sh) in the background and waits until it is ready.
# Usage: source servers/start.sh DIR   (sets KUBE_APISERVER_PID; DIR/kubeconfig,
#        DIR/etcd-url and DIR/kube-apiserver.log are its files)
# Stop it with: kill $KUBE_APISERVER_PID (it shuts down cleanly and exits 0).
kube_apiserver_dir=$1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/target/servers/kube-apiserver" --dir "$kube_apiserver_dir" \
    >"$kube_apiserver_dir.out" 2>&1 &
KUBE_APISERVER_PID=$!
for _ in $(seq 1 240); do
    [ -f "$kube_apiserver_dir/kubeconfig" ] && break
    if ! kill -0 "$KUBE_APISERVER_PID" 2>/dev/null; then
        echo "kube-apiserver exited before it was ready:" >&2
        cat "$kube_apiserver_dir.out" >&2
        tail -20 "$kube_apiserver_dir/kube-apiserver.log" >&2
        return 1 2>/dev/null || exit 1
    fi
    sleep 0.5
done
if [ ! -f "$kube_apiserver_dir/kubeconfig" ]; then
    echo "kube-apiserver was not ready after 120 s; its log: $kube_apiserver_dir/kube-apiserver.log" >&2
    return 1 2>/dev/null || exit 1
fi
echo "kube-apiserver ready: KUBECONFIG=$kube_apiserver_dir/kubeconfig (pid $KUBE_APISERVER_PID)"
