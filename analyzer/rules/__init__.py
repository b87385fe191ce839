"""Step 3: the order of causes.md (order.py) and one module per family of causes."""
