"""Pod descriptions: GPU shapes (vLLM, trainers, Triton, notebooks), CPU shapes, system and DaemonSet pods."""

from __future__ import annotations

import json

from bundle_objects import GPU_TOLERATION, P
from bundlegen.common import GPU, C, env_of

ISTIO = "gcr.io/istio-release/proxyv2:1.24.1"
SC_APP = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
          "runAsNonRoot": True, "runAsUser": 1000}
SC_ISTIO = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "privileged": False,
            "readOnlyRootFilesystem": True, "runAsGroup": 1337, "runAsNonRoot": True, "runAsUser": 1337}
SC_ISTIO_INIT = {"allowPrivilegeEscalation": False, "capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]},
                 "privileged": False, "readOnlyRootFilesystem": False, "runAsGroup": 0, "runAsNonRoot": False, "runAsUser": 0}


def istio(desc: dict) -> dict:
    """Istio in native-sidecar mode: an ordinary init container and a restartable proxy."""
    env = env_of("PROXY_CONFIG", "ISTIO_META_CLUSTER_ID", "ISTIO_META_WORKLOAD_NAME", "ISTIO_KUBE_APP_PROBERS",
                 fields=("POD_NAME", "POD_NAMESPACE", "POD_IP"))
    mounts = [("istiod-ca-cert", "/var/run/secrets/istio", False), ("istio-data", "/var/lib/istio/data", False),
              ("istio-envoy", "/etc/istio/proxy", False), ("istio-token", "/var/run/secrets/tokens", False),
              ("istio-podinfo", "/etc/istio/pod", False)]
    init = C("istio-init", ISTIO, "10m", "40Mi", lcpu="2", lmem="1Gi",
             args=["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-b", "*",
                   "-d", "15090,15021,15020"], sc=SC_ISTIO_INIT)
    proxy = C("istio-proxy", ISTIO, "100m", "128Mi", lcpu="2", lmem="1Gi", restart="Always", env=env,
              args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning"],
              ports=[("http-envoy-prom", 15090)], probe=(15021, "/healthz/ready"), mounts=mounts, sc=SC_ISTIO)
    desc["inits"] = [init, proxy] + list(desc.get("inits") or [])
    vols = [{"emptyDir": {"medium": "Memory"}, "name": "istio-envoy"},
            {"emptyDir": {}, "name": "istio-data"},
            {"downwardAPI": {"defaultMode": 420, "items": [
                {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}, "path": "labels"},
                {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations"}, "path": "annotations"}]},
             "name": "istio-podinfo"},
            {"name": "istio-token", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"audience": "istio-ca", "expirationSeconds": 43200, "path": "istio-token"}}]}},
            {"configMap": {"defaultMode": 420, "name": "istio-ca-root-cert"}, "name": "istiod-ca-cert"}]
    desc["volumes"] = vols + list(desc.get("volumes") or [])
    ann = dict(desc.get("annotations") or {})
    ann.update({
        "istio.io/rev": "default",
        "kubectl.kubernetes.io/default-container": desc["containers"][0]["name"],
        "kubectl.kubernetes.io/default-logs-container": desc["containers"][0]["name"],
        "prometheus.io/path": "/stats/prometheus",
        "prometheus.io/port": "15020",
        "prometheus.io/scrape": "true",
        "sidecar.istio.io/status": json.dumps({
            "initContainers": ["istio-init", "istio-proxy"], "containers": None,
            "volumes": ["istio-envoy", "istio-data", "istio-podinfo", "istio-token", "istiod-ca-cert"],
            "imagePullSecrets": None, "revision": "default"}, separators=(",", ":")),
    })
    desc["annotations"] = ann
    labels = dict(desc.get("labels") or {})
    labels.update({"security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": P("app"),
                   "service.istio.io/canonical-revision": "latest"})
    desc["labels"] = labels
    return desc


def gpu_volumes(shm: str = "16Gi") -> list:
    return [{"emptyDir": {"medium": "Memory", "sizeLimit": shm}, "name": "dshm"},
            {"emptyDir": {}, "name": "model-cache"}]


GPU_MOUNTS = [("dshm", "/dev/shm", False), ("model-cache", "/root/.cache/huggingface", False)]


def owner_labels(kind: str) -> dict:
    """Labels of a pod for its owner kind (placeholders filled per workload / per pod)."""
    base = {"app": P("app"), "app.kubernetes.io/name": P("app"), "app.kubernetes.io/part-of": P("team"),
            "team": P("team")}
    if kind == "ReplicaSet":
        base["pod-template-hash"] = P("hash")
    elif kind == "Job":
        base.update({"batch.kubernetes.io/controller-uid": P("ouid"), "batch.kubernetes.io/job-name": P("oname"),
                     "controller-uid": P("ouid"), "job-name": P("oname")})
    elif kind == "StatefulSet":
        base.update({"apps.kubernetes.io/pod-index": P("idx"), "controller-revision-hash": P("crh"),
                     "statefulset.kubernetes.io/pod-name": P("name")})
    elif kind == "DaemonSet":
        base = {"k8s-app": P("app"), "controller-revision-hash": P("crh"), "pod-template-generation": "1"}
    return base


def selector_of(kind: str) -> dict:
    return {"k8s-app": P("app")} if kind == "DaemonSet" else {"app": P("app")}


def desc_base(owner: str | None, containers: list, **kw) -> dict:
    d = {"owner": owner, "containers": containers, "labels": owner_labels(owner or "Pod"),
         "owner_labels": {"app.kubernetes.io/name": P("app"), "team": P("team")}, "selector": selector_of(owner or "Pod")}
    if owner is None:
        d["labels"] = {"app": P("app"), "team": P("team")}
    d.update(kw)
    return d


# -- GPU shapes -----------------------------------------------------------------------------

def sel_accel(gpu: dict) -> dict:
    return {"cloud.google.com/gke-accelerator": gpu["accel"]}


def sel_pool(pool: str) -> dict:
    return {"cloud.google.com/gke-nodepool": pool}


def vllm_desc(owner: str | None, gpus: int, sel: dict, tol: bool, cpu: str, mem: str, *, image: str = "vllm/vllm-openai:v0.6.3.post1",
              res: str = GPU, **kw) -> dict:
    c = C("vllm", image, cpu, mem, lmem=mem, gpu=gpus, res=res,
          args=["--model", "/models/llama-3.1-8b-instruct", "--tensor-parallel-size", str(max(1, gpus)),
                "--max-model-len", "8192", "--gpu-memory-utilization", "0.92", "--port", "8000"],
          env=env_of("HF_TOKEN", "VLLM_LOGGING_LEVEL", fields=("POD_NAME",)),
          ports=[("http", 8000)], probe=(8000, "/health"), mounts=GPU_MOUNTS)
    return desc_base(owner, [c], node_selector=sel, tolerations=[GPU_TOLERATION] if tol else [],
                     volumes=gpu_volumes(), priority_class="ml-serving", priority=100000, **kw)


def trainer_desc(owner: str | None, gpus: int, sel: dict | None, tol: bool, cpu: str, mem: str, *, res: str = GPU,
                 restart: str = "Never", **kw) -> dict:
    fetch = C("fetch-dataset", "gcr.io/google.com/cloudsdktool/google-cloud-cli:497.0.0-slim", "1", "2Gi",
              cmd=["gcloud", "storage", "cp", "-r", "gs://prod-ml-datasets/shards/", "/data/"],
              mounts=[("data", "/data", False)])
    metrics = C("metrics-agent", "us-docker.pkg.dev/prod-ml-platform/infra/metrics-agent:1.9.2", "100m", "128Mi",
                restart="Always")
    train = C("trainer", "nvcr.io/nvidia/pytorch:24.09-py3", cpu, mem, lmem=mem, gpu=gpus, res=res,
              cmd=["torchrun"], args=["--nnodes", "1", "--nproc-per-node", str(max(1, gpus)), "/workspace/train.py",
                                      "--config", "/workspace/configs/run.yaml"],
              env=env_of("NCCL_DEBUG", "WANDB_API_KEY", "CHECKPOINT_BUCKET", fields=("POD_NAME",)),
              mounts=[("dshm", "/dev/shm", False), ("data", "/data", False)])
    vols = [{"emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}, "name": "dshm"}, {"emptyDir": {}, "name": "data"}]
    d = desc_base(owner, [train], inits=[fetch, metrics], tolerations=[GPU_TOLERATION] if tol else [], volumes=vols,
                  restart=restart, priority_class="ml-batch", priority=1000, **kw)
    if sel:
        d["node_selector"] = sel
    return d


def triton_desc(owner: str | None, gpus: int, sel: dict, tol: bool, cpu: str, mem: str, **kw) -> dict:
    c = C("triton", "nvcr.io/nvidia/tritonserver:24.09-py3", cpu, mem, lmem=mem, gpu=gpus,
          cmd=["tritonserver"], args=["--model-repository=gs://prod-ml-models/triton", "--strict-model-config=false",
                                      "--log-verbose=0"],
          env=env_of("GOOGLE_APPLICATION_CREDENTIALS", "TRITON_CACHE", fields=("POD_NAME",)),
          ports=[("http", 8000), ("grpc", 8001), ("metrics", 8002)], probe=(8000, "/v2/health/ready"),
          mounts=GPU_MOUNTS)
    return desc_base(owner, [c], node_selector=sel, tolerations=[GPU_TOLERATION] if tol else [], volumes=gpu_volumes("8Gi"),
                     priority_class="ml-serving", priority=100000, **kw)


def notebook_desc(owner: str | None, gpus: int, sel: dict, tol: bool, *, res: str = GPU, **kw) -> dict:
    c = C("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-03", "2", "16Gi", lmem="16Gi", gpu=gpus, res=res,
          args=["start-notebook.py", "--ServerApp.base_url=/user/$(JUPYTERHUB_USER)/"],
          env=env_of("JUPYTERHUB_USER", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL", "JUPYTERHUB_SERVICE_PREFIX",
                     "MEM_GUARANTEE", "CPU_GUARANTEE"), ports=[("notebook-port", 8888)],
          mounts=[("home", "/home/jovyan", False), ("dshm", "/dev/shm", False)])
    vols = [{"emptyDir": {}, "name": "home"}, {"emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}, "name": "dshm"}]
    d = desc_base(owner, [c], tolerations=[GPU_TOLERATION] if tol else [], volumes=vols, **kw)
    if sel:
        d["node_selector"] = sel
    return d


# -- CPU shapes -------------------------------------------------------------------------------

def web_desc(cpu: str, mem: str, **kw) -> dict:
    c = C("app", "us-docker.pkg.dev/prod-ml-platform/apps/web:2026.11.4", cpu, mem, lmem=mem,
          env=env_of("DATABASE_URL", "REDIS_URL", fields=("POD_NAME",)),
          ports=[("http", 8080)], probe=(8080, "/healthz"), sc=SC_APP, mounts=[("tmp", "/tmp", False)])
    d = desc_base("ReplicaSet", [c], volumes=[{"emptyDir": {}, "name": "tmp"}], pod_sc={"fsGroup": 1000, "seccompProfile": {"type": "RuntimeDefault"}}, **kw)
    return istio(d)


def api_desc(cpu: str, mem: str, **kw) -> dict:
    proxy = C("cloud-sql-proxy", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1", "100m", "128Mi", lmem="256Mi",
              restart="Always", args=["--structured-logs", "--port=5432", "prod-ml-platform:us-central1:prod-pg"])
    c = C("api", "us-docker.pkg.dev/prod-ml-platform/apps/api:2026.11.2", cpu, mem, lmem=mem,
          env=env_of("DB_HOST", "DB_PASSWORD", "SENTRY_DSN"), ports=[("http", 8000)], probe=(8000, "/livez"))
    return desc_base("ReplicaSet", [c], inits=[proxy], pod_sc={"fsGroup": 1000}, sa="api", **kw)


def worker_desc(cpu: str, mem: str, owner: str = "ReplicaSet", **kw) -> dict:
    c = C("worker", "us-docker.pkg.dev/prod-ml-platform/apps/worker:2026.11.1", cpu, mem, env=env_of("BROKER_URL"))
    return desc_base(owner, [c], **kw)


def static_desc(cpu: str, mem: str) -> dict:
    c = C("nginx", "nginx:1.27.2", cpu, mem, ports=[("http", 80)])
    return desc_base("ReplicaSet", [c])


def sandbox_desc(cpu: str, mem: str, owner: str = "ReplicaSet", **kw) -> dict:
    c = C("runner", "us-docker.pkg.dev/prod-ml-platform/apps/code-runner:2026.10.9", cpu, mem, lmem=mem,
          env=env_of("SANDBOX_TIMEOUT", "LOG_LEVEL"), ports=[("http", 8080)], probe=(8080, "/ready"), sc=SC_APP)
    return desc_base(owner, [c], runtime_class="gvisor", overhead={"cpu": "250m", "memory": "64Mi"}, **kw)


# Deployment-owned CPU workloads whose shape depends only on (cpu, memory).
DEPLOYMENT_DESCS = {"web": web_desc, "api": api_desc, "worker": worker_desc, "static": static_desc, "sandbox": sandbox_desc}


def etl_desc(cpu: str, mem: str, *, wait: bool = False, **kw) -> dict:
    c = C("etl", "us-docker.pkg.dev/prod-ml-platform/data/etl:2026.11.5", cpu, mem, lmem=mem,
          cmd=["python", "-m", "etl.run"], args=["--date", "$(RUN_DATE)"], env=env_of("RUN_DATE", "WAREHOUSE_DSN"))
    inits = [C("wait-for-warehouse", "busybox:1.36", "10m", "16Mi",
               cmd=["sh", "-c", "until nc -z warehouse-proxy 5432; do sleep 2; done"])] if wait else []
    return desc_base("Job", [c], inits=inits, restart="OnFailure", **kw)


def db_desc(kind: str, cpu: str, mem: str, **kw) -> dict:
    image = {"postgres": "postgres:16.4", "redis": "redis:7.4.1", "kafka": "bitnami/kafka:3.8.0",
             "milvus": "milvusdb/milvus:v2.4.13"}[kind]
    port = {"postgres": 5432, "redis": 6379, "kafka": 9092, "milvus": 19530}[kind]
    c = C(kind, image, cpu, mem, lmem=mem, env=env_of("DATA_DIR", "CLUSTER_NAME", "ADMIN_PASSWORD", fields=("POD_NAME",)),
          ports=[("tcp", port)], mounts=[("data", "/var/lib/data", False)])
    d = desc_base("StatefulSet", [c], sts_service=P("app") + "-headless",
                  pod_volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-" + P("name")}}],
                  claims=[("data", "100Gi", "premium-rwo")], **kw)
    return d


def system_desc(name: str) -> dict:
    if name == "kube-dns":
        cs = [C("kubedns", "gke.gcr.io/k8s-dns-kube-dns:1.23.0-gke.9", "100m", "70Mi", lmem="210Mi",
                args=["--domain=cluster.local.", "--dns-port=10053", "--config-dir=/kube-dns-config", "--v=2"],
                ports=[("dns-local", 10053), ("metrics", 10055)], probe=(8081, "/readiness")),
              C("dnsmasq", "gke.gcr.io/k8s-dns-dnsmasq-nanny:1.23.0-gke.9", "150m", "20Mi",
                args=["-v=2", "-logtostderr", "-configDir=/etc/k8s/dns/dnsmasq-nanny", "-restartDnsmasq=true"],
                ports=[("dns", 53)]),
              C("sidecar", "gke.gcr.io/k8s-dns-sidecar:1.23.0-gke.9", "10m", "20Mi", ports=[("metrics", 10054)])]
    elif name == "konnectivity-agent":
        cs = [C("konnectivity-agent", "gke.gcr.io/proxy-agent:v0.31.0-gke.4", "10m", "30Mi", lmem="125Mi",
                args=["--logtostderr=true", "--ca-cert=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                      "--proxy-server-port=8132", "--sync-forever=true"], ports=[("metrics", 8093)])]
    elif name == "metrics-server":
        cs = [C("metrics-server", "gke.gcr.io/metrics-server:v0.7.2-gke.2", "48m", "105Mi",
                args=["--secure-port=10250", "--kubelet-port=10255", "--metric-resolution=30s"],
                ports=[("https", 10250)], probe=(10250, "/readyz"))]
    elif name == "volcano-scheduler":  # as Volcano's chart ships it (installer/helm/chart/volcano/templates/scheduler.yaml)
        cs = [C("volcano-scheduler", "docker.io/volcanosh/vc-scheduler:v1.12.1", "100m", "128Mi",
                args=["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf", "--enable-healthz=true",
                      "--enable-metrics=true", "--leader-elect=false", "-v=3"], ports=[("metrics", 8080)])]
    elif name == "hami-scheduler":  # as HAMi's chart ships it (charts/hami/templates/scheduler/deployment.yaml)
        cs = [C("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.31.4", "100m", "128Mi",
                args=["--config=/config/config.yaml", "--scheduler-name=hami-scheduler", "--leader-elect=false"]),
              C("vgpu-scheduler-extender", "docker.io/projecthami/hami:v2.8.0", "100m", "128Mi",
                args=["--http_bind=0.0.0.0:443", "--scheduler-name=hami-scheduler", "--device-config-file=/device-config.yaml"],
                ports=[("https", 443)])]
    else:
        cs = [C(name, f"gke.gcr.io/{name}:v0.9.3-gke.1", "50m", "64Mi", lmem="128Mi", ports=[("http", 8080)])]
    return desc_base("ReplicaSet", cs, node_selector=sel_pool("system-pool"), priority_class="system-cluster-critical",
                     priority=2000000000, sa=name,
                     tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}])


def ds_desc(name: str, gpu_only: bool) -> dict:
    tol_all = [{"operator": "Exists"}]
    if name == "fluentbit-gke":
        cs = [C("fluentbit", "gke.gcr.io/fluent-bit:v1.8.12-gke.41", "50m", "100Mi", lmem="250Mi",
                mounts=[("varlog", "/var/log", False)]),
              C("fluentbit-gke", "gke.gcr.io/fluent-bit-gke-exporter:v0.28.0-gke.3", "50m", "100Mi", lmem="250Mi",
                ports=[("metrics", 2021)])]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, priority_class="system-node-critical",
                      priority=2000001000, sa="fluentbit-gke",
                      volumes=[{"hostPath": {"path": "/var/log", "type": ""}, "name": "varlog"}])
    elif name == "gke-metadata-server":
        cs = [C("gke-metadata-server", "gke.gcr.io/gke-metadata-server:20260910_2300_RC0", "100m", "100Mi", lmem="200Mi",
                args=["--logtostderr", "--token-exchange-endpoint=https://securetoken.googleapis.com/v1/identitybindingtoken"],
                ports=[("metrics", 54898)], probe=(54898, "/healthz"))]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, host_network=True, dns="Default",
                      priority_class="system-node-critical", priority=2000001000, sa="gke-metadata-server")
    elif name == "pdcsi-node":
        cs = [C("csi-driver-registrar", "gke.gcr.io/csi-node-driver-registrar:v2.11.1-gke.12", "5m", "10Mi",
                args=["--v=5", "--csi-address=/csi/csi.sock"], mounts=[("plugin-dir", "/csi", False)]),
              C("gce-pd-driver", "gke.gcr.io/gcp-compute-persistent-disk-csi-driver:v1.15.3-gke.0", "5m", "10Mi",
                args=["--v=5", "--endpoint=unix:/csi/csi.sock"],
                mounts=[("kubelet-dir", "/var/lib/kubelet", False), ("plugin-dir", "/csi", False)],
                sc={"privileged": True})]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, priority_class="system-node-critical", priority=2000001000,
                      sa="pdcsi-node-sa",
                      volumes=[{"hostPath": {"path": "/var/lib/kubelet", "type": "Directory"}, "name": "kubelet-dir"},
                               {"hostPath": {"path": "/var/lib/kubelet/plugins/pd.csi.storage.gke.io/", "type": "DirectoryOrCreate"}, "name": "plugin-dir"}])
    elif name == "anetd":
        cs = [C("cilium-agent", "gke.gcr.io/cilium/cilium:v1.16.7-gke.300", "200m", "300Mi",
                cmd=["cilium-agent"], args=["--config-dir=/tmp/cilium/config-map"],
                env=env_of(fields=("NODE_NAME",)), ports=[("health", 9879)],
                mounts=[("bpf-maps", "/sys/fs/bpf", False), ("cilium-run", "/var/run/cilium", False)],
                sc={"privileged": True})]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, host_network=True,
                      priority_class="system-node-critical", priority=2000001000, sa="anetd",
                      volumes=[{"hostPath": {"path": "/sys/fs/bpf", "type": "DirectoryOrCreate"}, "name": "bpf-maps"},
                               {"hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"}, "name": "cilium-run"}])
    elif name == "node-exporter":
        cs = [C("node-exporter", "quay.io/prometheus/node-exporter:v1.8.2", "25m", "32Mi", lmem="128Mi",
                args=["--path.procfs=/host/proc", "--path.sysfs=/host/sys"], ports=[("metrics", 9100)],
                mounts=[("proc", "/host/proc", True), ("sys", "/host/sys", True)], token=False)]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, host_network=True, sa="node-exporter",
                      automount=False,
                      volumes=[{"hostPath": {"path": "/proc", "type": ""}, "name": "proc"},
                               {"hostPath": {"path": "/sys", "type": ""}, "name": "sys"}])
    elif name == "nvidia-gpu-device-plugin-large-cos":
        cs = [C("nvidia-gpu-device-plugin", "gke.gcr.io/nvidia-gpu-device-plugin:v0.16.2-gke.7", "50m", "50Mi", lmem="50Mi",
                cmd=["/usr/bin/nvidia-gpu-device-plugin", "-logtostderr", "--enable-container-gpu-metrics",
                     "--enable-health-monitoring"],
                env=env_of("LD_LIBRARY_PATH", "GPU_CONFIG_FILE", fields=("NODE_NAME",)), ports=[("metrics", 2112)],
                mounts=[("device-plugin", "/device-plugin", False), ("dev", "/dev", False), ("nvidia", "/usr/local/nvidia", False)],
                sc={"privileged": True})]
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}]}}}
        d = desc_base("DaemonSet", cs, affinity=aff, tolerations=tol_all, priority_class="system-node-critical",
                      priority=2000001000,
                      volumes=[{"hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": ""}, "name": "device-plugin"},
                               {"hostPath": {"path": "/dev", "type": ""}, "name": "dev"},
                               {"hostPath": {"path": "/home/kubernetes/bin/nvidia", "type": "Directory"}, "name": "nvidia"}])
    else:  # dcgm-exporter
        cs = [C("dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04", "100m", "256Mi", lmem="512Mi",
                args=["-f", "/etc/dcgm-exporter/dcp-metrics-included.csv"],
                env=env_of("DCGM_EXPORTER_KUBERNETES", "DCGM_EXPORTER_LISTEN", fields=("NODE_NAME",)),
                ports=[("metrics", 9400)], probe=(9400, "/health"),
                mounts=[("pod-resources", "/var/lib/kubelet/pod-resources", True), ("nvidia", "/usr/local/nvidia", True)],
                sc={"privileged": True})]
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}]}}}
        d = desc_base("DaemonSet", cs, affinity=aff, tolerations=tol_all, sa="dcgm-exporter",
                      volumes=[{"hostPath": {"path": "/var/lib/kubelet/pod-resources", "type": ""}, "name": "pod-resources"},
                               {"hostPath": {"path": "/home/kubernetes/bin/nvidia", "type": "Directory"}, "name": "nvidia"}])
    d["owner_labels"] = {"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": P("app")}
    return d


# ===================================================================== model
