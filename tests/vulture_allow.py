"""Names vulture cannot see used (the dead-code check in .ci/run reads this beside the code): each is used
by a framework or read by tests and -o json, not by a call vulture can follow."""

# ruff: noqa
from analyzer import cli, cli_help, words
from analyzer.diff.records import NodeGpu
from analyzer.model.columns import NodeColumns
from analyzer.model.dra import cel, views
from analyzer.replay import commands

# typer commands: called by the CLI framework from their decorators.
cli.validate, cli.analyze, cli.collect, cli.diff, cli.report
commands.serve, commands.shell
cli._root  # the typer app's callback (--version)
# click calls these overrides of its Command and Group.
cli_help.HelpCommand.collect_usage_pieces, cli_help.HelpCommand.get_short_help_str, cli_help.HelpCommand.format_help, cli_help.HelpGroup.format_help
# Read only by the tests (tests/test_columns.py: the DRA recording's device counts).
NodeColumns.device_counts
# The vocabulary -o json's schema enumerates (tests/test_classify_lab.py checks it).
words.VOCABULARY
# diff compares these fields by name (diff/compare.py _FIELDS).
NodeGpu.gpu_labels, NodeGpu.usage_unknown
# CEL cache statistics: the CEL bounds tests read them (tests/test_cel.py).
cel.CacheStats.compiles, cel.CacheStats.evaluations, cel.CacheStats.hits, cel.Selectors.stats
# Parsed DRA facts kept as evidence of what was read (tests/test_dra_allocate.py reads dropped_slices).
views.Request.first_available, views.Claim.owner_pod, views.DraViews.dropped_slices, views.PodClaims.container_claims
# The collector sets a tar member's owner fields to fixed values (a reproducible archive); tarfile reads them.
_ = None
_.gid, _.gname, _.uname
