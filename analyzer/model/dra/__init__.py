"""Dynamic Resource Allocation (resource.k8s.io): devices, claims and their CEL selectors."""
