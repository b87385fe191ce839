"""Replay a bundle to the real kubectl: a read-only Kubernetes API over the bundle's files.

Design:
  kinds.py      which files become which API resources (group, version, scope, short names)
  store.py      the bundle loaded once into memory, indexed by (namespace, name); the collection time
  selectors.py  labelSelector / fieldSelector, parsed and matched as the API server does
  humantime.py  apimachinery's duration.HumanDuration, counted from the collection time
  tables.py     server-side Table rows with the columns of pkg/printers/internalversion/printers.go
  api.py        request -> response, pure functions over the store (no HTTP in it)
  server.py     aiohttp web server around api.py, bound to 127.0.0.1 unless a flag says otherwise
  causes.py     the ONE call into the analysis pipeline: (namespace, name) -> (word, reason)
  commands.py   `gpu-triage serve` and `gpu-triage shell`, registered on the CLI's typer app

The cause word is shown as annotations on served pods (`gpu-triage.io/cause`, `gpu-triage.io/reason`),
so `kubectl get pods -o custom-columns=...:.metadata.annotations.gpu-triage\\.io/cause` works with
no client change; nothing else about a served object differs from the bundle's bytes.

Why aiohttp (web server): maintained, asyncio-based (one thread serves many kubectl connections,
no thread per request), it parses HTTP itself (no hand-written parser here) and bounds request
bodies (`client_max_size`) and header sizes, so a flood of requests costs bounded memory.
"""
