"""Step 2: validated items -> slim views and indexes, built once, never changed after; Kubernetes' own rules
(quantities, requests, selectors, taints) that the views are computed with."""
