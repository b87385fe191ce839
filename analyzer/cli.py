"""The gpu-triage command line: thin typer commands over pipeline, report and collector.

No rule lives here. As kubectl: `-o/--output` is the format on every command; help pages and option errors
come from cli_help.py. Exit statuses (cli_help.EXIT_CODES, also in --help and the README): validate 0 valid /
1 findings / 2 unreadable; the other commands 0 answered / 2 usage error, unreadable or partly invalid (what
could be answered is still printed; the problems go to stderr).
"""

from __future__ import annotations

import gc
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Optional

import typer

from analyzer import __version__
from analyzer.text import PROBLEMS_SHOWN, problem_lines, terminal_width
from analyzer.cli_help import HelpCommand, HelpGroup, choice, error_text, exit_codes_text
from analyzer.errors import BundleError, UsageError

if TYPE_CHECKING:  # the pipeline (the model, the rules) is imported by the commands that read a bundle, not by --help
    from analyzer.pipeline import Analysis, Options

EXAMPLES_ANALYZE = """\
Examples:
  gpu-triage analyze dumps/lab-seven-states-v1.36             # table: one row per target, then counts per word
  gpu-triage analyze BUNDLE -o wide                           # each reason on one line, whatever the terminal
  gpu-triage analyze BUNDLE -o words                          # ns/name<TAB>word, for scripts
  gpu-triage analyze BUNDLE -o json                           # schemas/verdicts.schema.json
  gpu-triage analyze BUNDLE -n lab --manifest pod.yaml        # one namespace, plus a manifest the API server refused"""

app = typer.Typer(cls=HelpGroup, rich_markup_mode=None, add_completion=True, no_args_is_help=True,
                  pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]},
                  help="One cause word for every GPU pod that will not start, from a kubectl bundle, offline.",
                  epilog=exit_codes_text() + "\n\nShell completion: gpu-triage --install-completion (bash, zsh, fish, "
                         "PowerShell),\nor print the script with --show-completion.\n\n"
                         "Start with: gpu-triage analyze BUNDLE, then gpu-triage why BUNDLE NS/NAME --explain.")
command = partial(app.command, cls=HelpCommand)

BUNDLE_HELP = "Bundle directory or .tar.gz"


def _version_flag(value: bool) -> None:
    if value:
        print(f"gpu-triage {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version_flag, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """One cause word for every GPU pod that will not start, from a kubectl bundle, offline."""


def _say(line: str) -> None:
    from analyzer.text import printable

    sys.stderr.write(printable(line) + "\n")


def _fail(message: str, status: int = 2) -> None:
    _say(f"gpu-triage: {message}")
    raise typer.Exit(status)


def _guard(fn: Callable[[], int]) -> None:
    """Every error a person can meet becomes one line and exit 2, never a traceback. The command runs with the
    cyclic collector paused: one pass over one bundle creates hundreds of thousands of objects (verdicts, their
    evidence, the funnels' arrays) and no cycle worth collecting before the process ends, so the collector's
    passes only cost time (0.3 s of the diverse 150,000-pod bundle's -o json); reference counting frees
    everything as before, and memory stays bounded by the design (streamed reading, bounded evidence). `serve`, a
    long-running process, keeps the collector."""
    was = gc.isenabled()
    gc.disable()
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
    finally:
        if was:
            gc.enable()
    raise typer.Exit(status)


def _warn(analysis: Analysis, namespaces: Iterable[str] = (), gpu_pods: Iterable[str] = ()) -> None:
    """Files edited since collection and names the bundle does not hold: before the answer's problems."""
    from analyzer.cli_checks import unknown_names

    for line in analysis.changed:
        _say(f"gpu-triage: warning: {line}")
    for line in unknown_names(analysis, namespaces=namespaces, gpu_pods=gpu_pods):
        _say(f"gpu-triage: warning: {line}")


def _report_problems(analysis: Analysis) -> None:
    for note in analysis.notes:
        _say(f"gpu-triage: note: {note}")
    problems = analysis.problems
    if not problems:
        return
    total = analysis.problem_count
    for line in problem_lines(problems, total):
        _say(line)
    _say(f"gpu-triage: the bundle is partly invalid ({total} problem(s)); the answers above skip or mark what it affects")


def _output(values: tuple[str, ...], default: str | None, hint: Callable[[str], str] | None = None,
            what: str = "") -> Any:
    """-o/--output, the format, on every command (as kubectl): one of `values`, completed by the shell."""
    return typer.Option(default, "-o", "--output", metavar="|".join(values), callback=choice(values, hint),
                        autocompletion=lambda: list(values), help=what or f"Output format: {', '.join(values)}.")


BundleArg = typer.Argument(..., metavar="BUNDLE", help=BUNDLE_HELP)
NamespaceOpt = typer.Option(None, "-n", "--namespace", metavar="NS", help="Only targets in this namespace; repeatable.")
ManifestOpt = typer.Option(None, "--manifest", metavar="FILE", help="A pod manifest (YAML or JSON) to judge as an attempt; repeatable.")
GpuPodOpt = typer.Option(None, "--gpu-pod", metavar="NS/NAME", help="Declare GPU intent for this pod; repeatable.")
ResourceOpt = typer.Option(None, "--resource", metavar="NAME", help="Another accelerator resource name or pattern (e.g. example.com/fpga-*); repeatable.")
QuietOpt = typer.Option(False, "--quiet", "-q", help="No progress line on stderr (there is none in pipes anyway).")


def _options(namespace: Optional[List[str]], manifest: Optional[List[Path]], gpu_pod: Optional[List[str]],
             resource: Optional[List[str]]) -> Options:
    from analyzer.pipeline import Options

    return Options(namespaces=tuple(namespace or ()), manifests=tuple(manifest or ()), gpu_pods=tuple(gpu_pod or ()),
                   resources=tuple(resource or ()))


@command(epilog="Examples:\n  gpu-triage validate dumps/lab-seven-states-v1.36\n  gpu-triage validate prod-gpu-20261129T164658Z.tar.gz\n\n"
                "Exit status: 0 valid, 1 findings (listed on stdout), 2 unreadable.")
def validate(bundle: Path = BundleArg,
             engine: Optional[str] = typer.Option(None, "--engine", metavar="NAME", help="jsonschema-rs (default) or jsonschema."),
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


@command(epilog=EXAMPLES_ANALYZE + "\n\nExit status: 0 answered, 2 the bundle is unreadable or partly invalid "
                                   "(what could be answered is printed).")
def analyze(bundle: Path = BundleArg,
            output: str = _output(("table", "wide", "json", "words"), "table",
                                  what="table (reasons wrapped to the terminal), wide (one line each), json or words."),
            namespace: Optional[List[str]] = NamespaceOpt,
            manifest: Optional[List[Path]] = ManifestOpt,
            gpu_pod: Optional[List[str]] = GpuPodOpt,
            resource: Optional[List[str]] = ResourceOpt,
            quiet: bool = QuietOpt) -> None:
    """Validate, then give every Pending or node-less pod (and every refused manifest or owner) one cause word."""
    def run() -> int:
        from analyzer.pipeline import analyse, iter_verdicts
        from analyzer.output import ANALYZE, formats_for
        from analyzer.progress import ProgressLine

        fmt = formats_for(ANALYZE)[output]
        options = _options(namespace, manifest, gpu_pod, resource)
        with ProgressLine.for_stderr(quiet=quiet) as line:
            analysis = analyse(bundle, options, classify=False, progress=line.file)
            with analysis.bundle:
                if sys.stdout.isatty():
                    line.close()  # the answer goes to the same terminal: no line drawn across it
                targets = len(analysis.cluster.pod_targets) + len(analysis.extra)
                verdicts = line.counted("classifying", iter_verdicts(analysis, namespaces=options.namespaces,
                                                                     evidence=fmt.needs_evidence), targets)
                fmt.render(verdicts, sys.stdout)
                line.close()
                sys.stdout.flush()
                _warn(analysis, options.namespaces, options.gpu_pods)
                _report_problems(analysis)
                return 2 if analysis.problem_count else 0
    _guard(run)


@command(epilog="Examples:\n  gpu-triage why dumps/lab-seven-states-v1.36 lab/exhausted\n"
                "  gpu-triage why BUNDLE lab/exhausted --explain     # the evidence, for a person\n"
                "  gpu-triage why BUNDLE lab/exhausted -o json       # every removed node named\n"
                "  gpu-triage why BUNDLE lab/ReplicaSet/web-7d9c     # a refused owner")
def why(bundle: Path = BundleArg,
        pod: str = typer.Argument(..., metavar="NS/NAME", help="The pod (an owner: NS/KIND/NAME; an attempt: its NS/NAME)."),
        explain: bool = typer.Option(False, "--explain", help="Print the evidence for a person."),
        output: Optional[str] = _output(("word", "json"), None,
                                        what="word (the default) or json: the verdict as analyze -o json gives it, every node named."),
        manifest: Optional[List[Path]] = ManifestOpt,
        gpu_pod: Optional[List[str]] = GpuPodOpt,
        resource: Optional[List[str]] = ResourceOpt,
        namespace: Optional[str] = typer.Option(None, "-n", "--namespace", metavar="NS", help="The namespace, as in kubectl."),
        quiet: bool = QuietOpt) -> None:
    """One pod in, one word out."""
    pod = f"{namespace}/{pod}" if namespace and not pod.startswith(namespace + "/") else pod
    def run() -> int:
        from analyzer.classify import verdict_of
        from analyzer.cli_checks import did_you_mean
        from analyzer.pipeline import analyse, split_key
        from analyzer.progress import ProgressLine
        from analyzer.report import explain as explain_format, json_format

        keep = split_key(pod) if pod.count("/") == 1 else None
        with ProgressLine.for_stderr(quiet=quiet) as line:
            analysis = analyse(bundle, _options(None, manifest, gpu_pod, resource), classify=False, keep=keep,
                               progress=line.file)
        with analysis.bundle:
            verdict = verdict_of(analysis.cluster, analysis.extra, pod)
            if verdict is None:
                known = [*analysis.cluster.pod_keys, *(t.key for t in analysis.extra)]
                raise UsageError(f"{pod} is not in this bundle (not a pod in pods.json, a stored attempt, a --manifest "
                                 f"or a refused owner){did_you_mean(pod, known)}")
            if output == "json":
                json_format.render([verdict], sys.stdout)  # one pod: its funnel names every node (node_limit=None)
            elif explain:
                explain_format.render(verdict, sys.stdout, width=terminal_width(sys.stdout))
            else:
                print(verdict.word)
            sys.stdout.flush()
            _warn(analysis, (), gpu_pod or ())
            _report_problems(analysis)
            return 2 if analysis.problem_count else 0
    _guard(run)


@command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def collect(ctx: typer.Context) -> None:
    """Collect a bundle with kubectl (the same code as scripts/collect.py; `gpu-triage collect --help` for its options)."""
    from analyzer.collect_bridge import run_collector

    raise typer.Exit(run_collector(list(ctx.args), prog=f"{ctx.find_root().info_name} collect"))


@command()
def version() -> None:
    """Print the version (also: gpu-triage --version)."""
    print(f"gpu-triage {__version__}")


# ---- nodes and diff: thin wrappers over analyzer/occupancy/command.py and analyzer/diff/command.py ---------------

def _nodes_help() -> str:
    from analyzer.occupancy.order import ORDER_HELP

    return ("GPU occupancy per node and accelerator resource: allocatable, used, free, the node's state and the pending "
            f"pods that want it. Order: {ORDER_HELP}.")


@command(help=_nodes_help(), epilog="Examples:\n  gpu-triage nodes dumps/lab-seven-states-v1.36\n"
                                    "  gpu-triage nodes BUNDLE --resource 'nvidia.com/mig-*'\n  gpu-triage nodes BUNDLE -o csv > gpus.csv")
def nodes(bundle: Path = BundleArg,
          output: str = _output(("table", "json", "csv"), "table"),
          resource: Optional[str] = typer.Option(None, "--resource", metavar="NAME", help="Only this resource (a name or a pattern such as nvidia.com/mig-*).")) -> None:
    def run() -> int:
        from analyzer.occupancy.command import run as run_nodes
        from analyzer.output import NODES, formats_for

        return run_nodes(bundle, formats_for(NODES)[output], resource)
    _guard(run)


@command(epilog="Examples:\n  gpu-triage diff yesterday.tar.gz today.tar.gz\n  gpu-triage diff OLD NEW -o markdown   # for a ticket")
def diff(old: Path = typer.Argument(..., metavar="OLD", help="The earlier bundle (directory or .tar.gz)"),
         new: Path = typer.Argument(..., metavar="NEW", help="The later bundle (directory or .tar.gz)"),
         output: str = _output(("table", "json", "markdown"), "table")) -> None:
    """What changed between two bundles: collection first, then targets (appeared, resolved and why, changed
    word), GPU nodes, GPU per pool before and after, quotas."""
    def run() -> int:
        from analyzer.diff.command import run as run_diff
        from analyzer.output import DIFF, formats_for

        return run_diff(old, new, formats_for(DIFF)[output])
    _guard(run)

# ---- report: thin over analyzer/report/command.py -----------------------------------------------------------------


def _file_hint(value: str) -> str:
    from analyzer.report.command import looks_like_file

    return f" (to write the report to a file, use --file {value})" if looks_like_file(value) else ""


@command(epilog="Examples:\n  gpu-triage report dumps/lab-seven-states-v1.36              # report.html here\n"
                "  gpu-triage report BUNDLE -o markdown --file -               # Markdown on stdout\n"
                "  gpu-triage report BUNDLE --file /tmp/ticket-4711.html\n"
                "  gpu-triage report BUNDLE --file ticket.md                   # the extension picks markdown")
def report(bundle: Path = BundleArg,
           output: Optional[str] = _output(("html", "markdown"), None, hint=_file_hint,
                                           what="html (one self-contained page; the default) or markdown (GitHub-flavoured, "
                                                "under 65,000 characters); without -o, the --file extension decides."),
           file: Optional[str] = typer.Option(None, "--file", metavar="FILE",
                                              help="Where to write it (.html or .md); default report.html (or report.md) in the "
                                                   "current directory; - for standard output."),
           namespace: Optional[List[str]] = NamespaceOpt,
           manifest: Optional[List[Path]] = ManifestOpt,
           gpu_pod: Optional[List[str]] = GpuPodOpt,
           resource: Optional[List[str]] = ResourceOpt) -> None:
    """Write the ticket report: header, count per word, every target with its evidence, and the GPU occupancy per node."""
    def run() -> int:
        from analyzer.output import REPORT, formats_for
        from analyzer.report.command import resolve_format, write_report

        fmt = formats_for(REPORT)[resolve_format(output, file)]
        options = _options(namespace, manifest, gpu_pod, resource)
        analysis, where = write_report(bundle, fmt, file, options)
        _say(f"gpu-triage: report written to {where}")
        _warn(analysis, options.namespaces, options.gpu_pods)
        _report_problems(analysis)
        return 2 if analysis.problem_count else 0
    _guard(run)


# `serve` and `shell` live in analyzer/replay; only their typer definitions load here.
from analyzer.replay.commands import register as _register_replay  # noqa: E402

_register_replay(app, HelpCommand)


def _prog() -> str:
    """kubectl runs the plugin as kubectl-gpu_triage; its user typed `kubectl gpu-triage`."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "gpu-triage"
    return "kubectl gpu-triage" if name.startswith("kubectl-gpu_triage") else "gpu-triage"


def run_app(args: list[str] | None = None) -> int:
    """The command line with kubectl's error style: `error: …` and where the help is, exit 2."""
    # click's ClickException, found through typer's public BadParameter: typer has moved click around between
    # releases (a dependency, then vendored), and every release keeps this ancestry.
    click_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    prog = _prog()
    try:
        result = typer.main.get_command(app).main(args=args, prog_name=prog, standalone_mode=False)
    except click_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError" and getattr(exc, "ctx", None) is not None:
            sys.stdout.write(exc.ctx.get_help() + "\n")  # bare `gpu-triage`: the help, as bare `kubectl` gives it
            return 0
        sys.stderr.write(error_text(exc, prog) + "\n")
        return int(getattr(exc, "exit_code", 2))
    except typer.Abort:
        sys.stderr.write("gpu-triage: interrupted\n")
        return 130
    return result if isinstance(result, int) else 0


def main() -> None:
    """The console script."""
    try:
        code = run_app()
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
    except BrokenPipeError:
        # `gpu-triage analyze … | head`: the reader is gone. Python's documentation (signal, "Note on SIGPIPE"):
        # point stdout at devnull, so the interpreter's own flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(code)
