"""The gpu-triage command line: thin typer commands over pipeline, report and collector.

No rule lives here. Exit statuses: validate 0 valid / 1 findings / 2 unreadable;
analyze and why 0 answered / 2 unreadable or partly invalid (what could be
answered is still printed; the problems go to stderr).
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Callable, List, Optional

import typer

from analyzer import __version__
from analyzer.text import PROBLEMS_SHOWN, problem_lines
from analyzer.errors import BundleError, UsageError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="One cause word for every GPU pod that will not start, from a kubectl bundle, offline.")



class Output(str, Enum):
    table = "table"
    json = "json"
    words = "words"


class WhyOutput(str, Enum):
    json = "json"


def _say(line: str) -> None:
    from analyzer.text import printable

    sys.stderr.write(printable(line) + "\n")


def _fail(message: str, status: int = 2) -> None:
    _say(f"gpu-triage: {message}")
    raise typer.Exit(status)


def _guard(fn: Callable[[], int]) -> None:
    """Every error a person can meet becomes one line and exit 2, never a traceback."""
    try:
        status = fn()
    except (BundleError, UsageError) as exc:
        _fail(str(exc))
    except typer.Exit:
        raise
    except BrokenPipeError:
        # The reader went away (`… | head`): not an error of ours, and nothing more to say.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0) from None
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except MemoryError:
        _fail("out of memory while reading the bundle")
    except RecursionError:
        _fail("input nested too deeply")
    except Exception as exc:  # noqa: BLE001 - the promise is: no traceback for any input
        if os.environ.get("GPU_TRIAGE_DEBUG"):
            raise
        _fail(f"internal error ({type(exc).__name__}: {exc}); rerun with GPU_TRIAGE_DEBUG=1 and report it")
    raise typer.Exit(status)


def _report_problems(analysis) -> None:  # type: ignore[no-untyped-def]
    for note in analysis.notes:
        _say(f"gpu-triage: note: {note}")
    problems = analysis.problems
    if not problems:
        return
    total = analysis.problem_count
    for line in problem_lines(problems, total):
        _say(line)
    _say(f"gpu-triage: the bundle is partly invalid ({total} problem(s)); the answers above skip or mark what it affects")


ManifestOpt = typer.Option(None, "--manifest", help="A pod manifest (YAML or JSON) to judge as an attempt; repeatable.")
GpuPodOpt = typer.Option(None, "--gpu-pod", help="NS/NAME: declare GPU intent for this pod; repeatable.")
ResourceOpt = typer.Option(None, "--resource", help="Another accelerator resource name or pattern (e.g. example.com/fpga-*); repeatable.")


def _options(namespace, manifest, gpu_pod, resource):  # type: ignore[no-untyped-def]
    from analyzer.pipeline import Options

    return Options(namespaces=tuple(namespace or ()), manifests=tuple(manifest or ()), gpu_pods=tuple(gpu_pod or ()),
                   resources=tuple(resource or ()))


QuietOpt = typer.Option(False, "--quiet", "-q", help="No progress line on stderr (there is none in pipes anyway).")


@app.command()
def validate(bundle: Path = typer.Argument(..., help="Bundle directory or .tar.gz"),
             engine: Optional[str] = typer.Option(None, help="jsonschema-rs (default) or jsonschema"),
             quiet: bool = QuietOpt) -> None:
    """Check every file against its schema and the manifest's sizes and checksums."""
    def run() -> int:
        from analyzer.pipeline import validate_only
        from analyzer.progress import ProgressLine

        with ProgressLine.for_stderr(quiet=quiet) as line:
            checked = validate_only(bundle, engine, progress=line.file)
        count = checked.violation_count
        for line in problem_lines([str(v) for v in checked.violations[:PROBLEMS_SHOWN]], count):
            print(line)
        loaded = checked.loaded
        files = len(loaded.documents) + len(loaded.streamed) + len(loaded.attempts) + (1 if loaded.bundle.manifest else 0)
        if count:
            _say(f"gpu-triage: {count} violation(s) in {bundle}")
            return 1
        _say(f"gpu-triage: {bundle}: valid ({files} file(s), engine {loaded.engine})")
        return 0
    _guard(run)


@app.command()
def analyze(bundle: Path = typer.Argument(..., help="Bundle directory or .tar.gz"),
            output: Output = typer.Option(Output.table, "-o", "--output", help="table, json or words"),
            namespace: Optional[List[str]] = typer.Option(None, "-n", "--namespace", help="Only targets in this namespace; repeatable."),
            manifest: Optional[List[Path]] = ManifestOpt,
            gpu_pod: Optional[List[str]] = GpuPodOpt,
            resource: Optional[List[str]] = ResourceOpt,
            quiet: bool = QuietOpt) -> None:
    """Validate, then give every Pending or node-less pod (and every refused manifest or owner) one cause word."""
    def run() -> int:
        from analyzer.pipeline import analyse, iter_verdicts
        from analyzer.progress import ProgressLine
        from analyzer.report import renderers

        options = _options(namespace, manifest, gpu_pod, resource)
        with ProgressLine.for_stderr(quiet=quiet) as line:
            analysis = analyse(bundle, options, classify=False, progress=line.file)
            with analysis.bundle:
                if sys.stdout.isatty():
                    line.close()  # the answer goes to the same terminal: no line drawn across it
                targets = len(analysis.cluster.pod_targets) + len(analysis.extra)
                verdicts = line.counted("classifying", iter_verdicts(analysis, namespaces=options.namespaces), targets)
                # json and words are written as the verdicts come; the table needs them all for its widths.
                renderers()[output.value](list(verdicts) if output is Output.table else verdicts, sys.stdout)
                line.close()
                sys.stdout.flush()
                _report_problems(analysis)
                return 2 if analysis.problem_count else 0
    _guard(run)


@app.command()
def why(bundle: Path = typer.Argument(..., help="Bundle directory or .tar.gz"),
        pod: str = typer.Argument(..., help="NAMESPACE/NAME (an owner: NAMESPACE/KIND/NAME)"),
        explain: bool = typer.Option(False, "--explain", help="Print the evidence for a person."),
        output: Optional[WhyOutput] = typer.Option(None, "-o", "--output",
                                                   help="json: the verdict as `analyze -o json` gives it, with every node named"),
        manifest: Optional[List[Path]] = ManifestOpt,
        gpu_pod: Optional[List[str]] = GpuPodOpt,
        resource: Optional[List[str]] = ResourceOpt,
        quiet: bool = QuietOpt) -> None:
    """One pod in, one word out."""
    def run() -> int:
        from analyzer.classify import verdict_of
        from analyzer.pipeline import analyse, split_key
        from analyzer.progress import ProgressLine
        from analyzer.report import explain as explain_format
        from analyzer.report import json_format

        keep = split_key(pod) if pod.count("/") == 1 else None
        with ProgressLine.for_stderr(quiet=quiet) as line:
            analysis = analyse(bundle, _options(None, manifest, gpu_pod, resource), classify=False, keep=keep,
                               progress=line.file)
        with analysis.bundle:
            verdict = verdict_of(analysis.cluster, analysis.extra, pod)
            if verdict is None:
                raise UsageError(f"{pod} is not in this bundle (not a pod in pods.json, a stored attempt, a --manifest or a refused owner)")
            if output is WhyOutput.json:
                json_format.render([verdict], sys.stdout)  # one pod: its funnel names every node (node_limit=None)
            elif explain:
                explain_format.render(verdict, sys.stdout)
            else:
                print(verdict.word)
            sys.stdout.flush()
            _report_problems(analysis)
            return 2 if analysis.problem_count else 0
    _guard(run)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def collect(ctx: typer.Context) -> None:
    """Collect a bundle with kubectl (the same code as scripts/collect.py; `collect --help` for its options)."""
    from analyzer.collect_bridge import run_collector

    raise typer.Exit(run_collector(list(ctx.args)))


@app.command()
def version() -> None:
    """Print the version."""
    print(__version__)


# ---- nodes and diff: thin wrappers over analyzer/occupancy/command.py and analyzer/diff/command.py ---------------

class NodesOutput(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class DiffOutput(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


def _nodes_help() -> str:
    from analyzer.occupancy.order import ORDER_HELP

    return ("GPU occupancy per node and accelerator resource: allocatable, used, free, the node's state and the pending "
            f"pods that want it. Order: {ORDER_HELP}.")


@app.command(help=_nodes_help())
def nodes(bundle: Path = typer.Argument(..., help="Bundle directory or .tar.gz"),
          output: NodesOutput = typer.Option(NodesOutput.table, "-o", "--output", help="table, json or csv"),
          resource: Optional[str] = typer.Option(None, "--resource", help="Only this resource (a name or a pattern such as nvidia.com/mig-*).")) -> None:
    def run() -> int:
        from analyzer.occupancy.command import run as run_nodes

        return run_nodes(bundle, output.value, resource)
    _guard(run)


@app.command()
def diff(old: Path = typer.Argument(..., help="The earlier bundle (directory or .tar.gz)"),
         new: Path = typer.Argument(..., help="The later bundle (directory or .tar.gz)"),
         output: DiffOutput = typer.Option(DiffOutput.table, "-o", "--output", help="table, json or markdown")) -> None:
    """What changed between two bundles: collection first, then targets (appeared, resolved and why, changed word),
    GPU nodes, GPU per pool before and after, quotas."""
    def run() -> int:
        from analyzer.diff.command import run as run_diff

        return run_diff(old, new, output.value)
    _guard(run)

# ---- report: thin over analyzer/report/command.py -----------------------------------------------------------------

class ReportFormat(str, Enum):
    html = "html"
    markdown = "markdown"


@app.command()
def report(bundle: Path = typer.Argument(..., help="Bundle directory or .tar.gz"),
           fmt: ReportFormat = typer.Option(ReportFormat.html, "-o", "--format",
                                            help="html (one self-contained page) or markdown (GitHub-flavoured, under 65,000 characters)"),
           output: Optional[str] = typer.Option(None, "--output", metavar="FILE",
                                                help="Where to write it; default report.html (or report.md) in the current directory; - for standard output."),
           namespace: Optional[List[str]] = typer.Option(None, "-n", "--namespace", help="Only targets in this namespace; repeatable."),
           manifest: Optional[List[Path]] = ManifestOpt,
           gpu_pod: Optional[List[str]] = GpuPodOpt,
           resource: Optional[List[str]] = ResourceOpt) -> None:
    """Write the ticket report: header, count per word, every target with its evidence, and the GPU occupancy per node."""
    def run() -> int:
        from analyzer.report.command import write_report

        analysis, where = write_report(bundle, fmt.value, output, _options(namespace, manifest, gpu_pod, resource))
        _say(f"gpu-triage: report written to {where}")
        _report_problems(analysis)
        return 2 if analysis.problem_count else 0
    _guard(run)


# `serve` and `shell` (issue 13) live in analyzer/replay; only their typer definitions load here.
from analyzer.replay.commands import register as _register_replay  # noqa: E402

_register_replay(app)


def main() -> None:
    """The console script. After the answer is written, leave without freeing the parsed bundle
    object by object: on a 150,000-pod bundle that teardown alone takes seconds."""
    try:
        app()
        code = 0
    except SystemExit as exc:
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is None:
            code = 0
        else:
            sys.stderr.write(f"{exc.code}\n")
            code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `gpu-triage analyze … | head`
        pass
    os._exit(code)
