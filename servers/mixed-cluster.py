#!/usr/bin/env python3
"""Fills a kube-apiserver with issue 83's mixed cluster, through kubectl (the objects as a
user's tools write them: each with its managedFields entry):

  10,000 pods of three shapes in 20 namespaces: a web pod (one container), a pod with
         two sidecars (three containers, environment and mounts) and a Job's pod (an
         owner reference, a long command), in turn;
   3,000 ConfigMaps of 1 to 4 KB;
   1,000 Secrets of 10 KB;
     100 Nodes, each reporting 20 images.

Usage: python3 servers/mixed-cluster.py KUBECONFIG [SCALE]   (SCALE divides every count:
2 for half the cluster). Every object is made the same way on every run.
"""

import json
import subprocess
import sys

KUBECONFIG = sys.argv[1]
SCALE = int(sys.argv[2]) if len(sys.argv) > 2 else 1
NAMESPACES = [f"team-{i:02}" for i in range(20)]
CHUNK = 500


def create(items):
    """Creates `items` with kubectl, CHUNK at a time."""
    for start in range(0, len(items), CHUNK):
        body = json.dumps({"apiVersion": "v1", "kind": "List", "items": items[start:start + CHUNK]})
        subprocess.run(
            ["kubectl", "--kubeconfig", KUBECONFIG, "create", "-f", "-", "-o", "name"],
            input=body.encode(), check=True, stdout=subprocess.DEVNULL)


def container(name, image, extra=None, port=8080):
    c = {"name": name, "image": image,
         "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
         "ports": [{"containerPort": port, "name": f"port-{port}"}]}
    c.update(extra or {})
    return c


def pod(i):
    ns = NAMESPACES[i % len(NAMESPACES)]
    shape = i % 3
    meta = {"name": f"pod-{i:05}", "namespace": ns,
            "labels": {"app": f"app-{i % 50}", "tier": ["web", "api", "batch"][shape],
                       "pod-template-hash": f"{i * 7919 % 100000:05}"}}
    spec = {"automountServiceAccountToken": False, "nodeName": f"node-{i % 100:03}"}
    if shape == 0:
        spec["containers"] = [container("web", f"registry.example.com/web:1.{i % 9}")]
    elif shape == 1:
        env = [{"name": f"SETTING_{k}", "value": f"value-{k}-{i}"} for k in range(12)]
        mounts = [{"name": "config", "mountPath": "/etc/app"}, {"name": "cache", "mountPath": "/cache"}]
        spec["containers"] = [
            container("api", "registry.example.com/api:2.4", {"env": env, "volumeMounts": mounts}),
            container("proxy", "registry.example.com/envoy:1.31", {"args": ["--config", "/etc/app/envoy.yaml"]}, 9901),
            container("metrics", "registry.example.com/exporter:0.9", port=9090),
        ]
        spec["volumes"] = [{"name": "config", "configMap": {"name": "app-config"}}, {"name": "cache", "emptyDir": {}}]
    else:
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": f"report-{i}",
                                    "uid": f"00000000-0000-4000-8000-{i:012}", "controller": True}]
        script = " && ".join(f"step-{k} --input /data/{k} --output /out/{k}" for k in range(10))
        spec["containers"] = [container("report", "registry.example.com/report:3.1",
                                        {"command": ["sh", "-c", script]})]
        spec["restartPolicy"] = "Never"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def configmap(i):
    body = "\n".join(f"key{k}: {'v' * 40}" for k in range(20 + (i % 4) * 20))
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"config-{i:04}", "namespace": NAMESPACES[i % len(NAMESPACES)]},
            "data": {"app.yaml": body, "mode": "production"}}


def secret(i):
    # 10 KB of data once base64'd.
    value = "".join(chr(ord("a") + (i * 31 + k) % 26) for k in range(7680))
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": f"secret-{i:04}", "namespace": NAMESPACES[i % len(NAMESPACES)]},
            "stringData": {"token": value}}


def node(i):
    images = [{"names": [f"registry.example.com/image-{k}@sha256:{k:064}", f"registry.example.com/image-{k}:v{k}"],
               "sizeBytes": 10_000_000 + k} for k in range(20)]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:03}", "labels": {"kubernetes.io/hostname": f"node-{i:03}",
                                                          "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "spec": {"podCIDR": f"10.{i // 256}.{i % 256}.0/24"},
            "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}, "images": images}}


create([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in NAMESPACES])
# Pods need their namespace's `default` ServiceAccount; no controller manager makes it here.
create([{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}}
        for ns in NAMESPACES])
create([node(i) for i in range(100 // SCALE)])
create([configmap(i) for i in range(3000 // SCALE)])
create([secret(i) for i in range(1000 // SCALE)])
create([pod(i) for i in range(10000 // SCALE)])
print(f"made {10000 // SCALE} pods, {3000 // SCALE} ConfigMaps, {1000 // SCALE} Secrets, {100 // SCALE} Nodes "
      f"in {len(NAMESPACES)} namespaces")
