"""gpu-triage: one cause word for every GPU pod that will not start."""

__version__ = "0.1.0"
