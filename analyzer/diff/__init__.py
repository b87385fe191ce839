"""`gpu-triage diff OLD NEW`: what changed between two bundles.

    snapshot(path, config=None) -> Snapshot      one bundle as plain records (snapshot.py)
    compare(old: Snapshot, new: Snapshot) -> Diff  pure comparison (compare.py)
    diff_bundles(old, new) -> Diff                 both, from paths (command.py)
    formats/: table, json, markdown renderers: render(diff, out)

Each bundle is read once, by the pipeline `analyze` uses, in one isolated function (snapshot._analysed(path),
the only use of the classifier); the GPU picture comes from that analysis (occupancy.from_analysis).
"""
