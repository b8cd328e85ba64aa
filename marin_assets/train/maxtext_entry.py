"""The training process: MaxText pre-training in-process, progress streamed through Dagster Pipes.

    python -m marin_assets.train.maxtext_entry <maxtext.yml> [--log-file PATH]

Runs `maxtext.trainers.pre_train.train.main` (same code path as `python -m maxtext.trainers.
pre_train.train <yml>`) with a logging handler that turns MaxText's step and eval lines into
Pipes log messages while it trains. MaxText exits 0 on "Training stopped" (data exhausted,
pipeline errors); this process fails instead unless the last checkpoint is the last step. It
then hashes the final checkpoint here, where JAX is already loaded, finishes the W&B run MaxText
opened (if W&B is configured), and reports the result as a Pipes custom message. Outside Dagster
(bare `python -m ...`) the same lines go to stderr. Before anything else it installs trainer_guard:
exit with the launcher, heartbeat the run folder's lease, and on SIGTERM/SIGINT save a checkpoint of
the current step and exit with EXIT_PREEMPTED (a `TrainingPreempted:` line in the log says so).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import shutil
import sys
import time
import traceback

import yaml

from marin_assets.fastpath.maxtext import preemption_hook
from marin_assets.train import trainer_guard
from marin_assets.train.checkpoint_check import newest_good_checkpoint
from marin_assets.train.attempt_timeline import AttemptClock, append_attempt
from marin_assets.train.checkpoints import checkpoint_uri, latest_checkpoint_step, logical_hash
from marin_assets.train.device_memory import cpu_peak_tflops, peak_device_memory
from marin_assets.train.lease import lease_from_env
from marin_assets.train.metrics import EvalMetric, StepMetric, parse_line
from marin_assets.fastpath.maxtext.trainer_quiet import quiet_optional_dependencies
from marin_assets.train.wandb_tracking import describe, finish_run

EXIT_PREEMPTED = 3
PROGRESS_LINES = 100  # step lines forwarded per run (evals and the last step always are)


class TrainingFailed(RuntimeError):
    pass


PREEMPTED_MARKER = "TrainingPreempted: "  # the launcher reads this line from the log


class ProgressHandler(logging.Handler):
    """Sees every log record of the training process; forwards progress, keeps the outcome."""

    def __init__(self, report, steps: int, log_file: str | None, clock: AttemptClock | None = None):
        super().__init__()
        self.clock = clock
        self.report = report
        self.every = max(1, steps // PROGRESS_LINES)
        self.final_step = steps - 1
        self.last_step: int | None = None
        self.stopped: str | None = None
        self.file = open(log_file, "a", buffering=1) if log_file else None
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a malformed third-party record must not kill training
            return
        if self.file:
            try:
                self.file.write(self.format(record) + "\n")
            except OSError:  # a full disk must not turn every log call into a crash (the watchdog's too)
                self.handleError(record)
        parsed = parse_line(message)
        if self.clock is not None:
            self.clock.observe(message, parsed)
        if isinstance(parsed, StepMetric):
            self.last_step = parsed.step
            if parsed.step % self.every == 0 or parsed.step == self.final_step:
                self.report(f"step {parsed.step}/{self.final_step} loss {parsed.loss:.4f} "
                            f"({parsed.seconds:.3f} s, {parsed.tokens_per_s or 0:.0f} tokens/s/device)")
        elif isinstance(parsed, EvalMetric):
            self.report(f"eval after step {parsed.step}: loss {parsed.loss:.4f} over {parsed.tokens:.0f} tokens")
        elif isinstance(parsed, str):
            self.stopped = parsed


def _pipes():
    # Local runs: Pipes through the subprocess' env; TPU pods: through GCS, worker 0 only.
    from marin_assets.train.k8s.pod_pipes import open_worker_pipes

    return open_worker_pipes()


def run(config_path: str, log_file: str | None) -> dict:
    # First, before JAX loads: stop with the launcher, stop (with a checkpoint) when preempted.
    preemption = trainer_guard.Preemption().install()
    parent = trainer_guard.parent_pid_from_env()
    trainer_guard.die_with_parent(parent)
    trainer_guard.start_watchdog(parent, lease_from_env())
    keys = yaml.safe_load(open(config_path))
    steps = int(keys["steps"])
    run_dir = f"{keys['base_output_directory'].rstrip('/')}/{keys['run_name']}"
    checkpoints_dir = f"{run_dir}/checkpoints"
    with _pipes() as pipes:
        report = pipes.log.info if pipes else (lambda msg: print(msg, file=sys.stderr, flush=True))
        clock = AttemptClock()
        handler = ProgressHandler(report, steps, log_file, clock)
        logging.getLogger().addHandler(handler)
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.INFO)
        started = time.monotonic()
        quiet_optional_dependencies()  # before MaxText imports: no notices about packages it does not use
        from maxtext.trainers.pre_train import train

        preemption_hook.preemption_checkpoints(preemption)
        verdict = newest_good_checkpoint(checkpoints_dir, lambda msg: _warn(report, msg))
        try:
            train.main(["train", config_path])
        except BaseException as exc:
            with contextlib.suppress(OSError):  # a full disk must not hide the real failure
                _record_attempt(run_dir, clock.finish("failed", None))
            if not isinstance(exc, Exception):
                raise
            with contextlib.suppress(OSError):  # none left unrestorable; never hides the real failure
                newest_good_checkpoint(checkpoints_dir, lambda msg: _warn(report, msg))
            raise TrainingFailed(describe_failure(exc, checkpoints_dir)) from exc
        maxtext_s, maxtext_end = time.monotonic() - started, clock.clock()
        # before anything else runs here: the peak is the training's, not the per-domain eval's
        peak = peak_device_memory()
        cpu_peak = cpu_peak_tflops() if keys.get("hardware") == "cpu" else None
        wandb_run = finish_run()  # MaxText opens a W&B run when configured but never finishes it
        if preemption.checkpoint_step is not None:
            logging.getLogger(__name__).error(
                "%spreempted by %s after step %d; checkpoint %d saved, a retry resumes from it",
                PREEMPTED_MARKER, preemption.signal_name, preemption.checkpoint_step, preemption.checkpoint_step)
            _record_attempt(run_dir, clock.finish("preempted", peak, maxtext_end))
            sys.exit(EXIT_PREEMPTED)
        try:
            summary = _verify(handler, checkpoints_dir, steps)
        except TrainingFailed as exc:
            logging.getLogger(__name__).error("TrainingFailed: %s", exc)  # lands in the run's log file
            _record_attempt(run_dir, clock.finish("failed", peak, maxtext_end))
            raise
        summary["resumed_from_step"] = verdict.step
        summary["damaged_checkpoints"] = {str(k): v for k, v in verdict.set_aside.items()}
        summary["peak_memory_bytes"], summary["peak_memory_source"] = peak
        summary["cpu_peak"] = cpu_peak
        summary.update(_domain_eval(config_path, keys, report))
        if int(keys.get("num_experts", 1)) > 1:
            summary.update(_routing(config_path, keys, report))
        summary["wandb"] = wandb_run
        summary["maxtext_s"] = round(maxtext_s, 3)  # what the bare MaxText command would also spend
        _record_attempt(run_dir, clock.finish("finished", peak, maxtext_end))
        summary["finished_at"] = time.time()  # after this, only interpreter/JAX teardown (the bare command's too)
        if wandb_run is not None:
            report(f"W&B: {describe(wandb_run, None)}")
        if pipes:
            pipes.report_custom_message(summary)
        report(f"training finished: checkpoint {summary['checkpoint_step']} hash {summary['checkpoint_hash'][:16]}")
        return summary


def _warn(report, message: str) -> None:
    logging.getLogger(__name__).warning(message)
    report(message)


def describe_failure(exc: BaseException, checkpoints_dir: str) -> str:
    """What stopped MaxText, in one line; a full disk names the checkpoint folder and its free space."""
    detail = str(exc)
    detail = detail if len(detail) <= 600 else detail[:600] + " ..."  # the full traceback is in the log
    text = f"MaxText failed: {type(exc).__name__}: {detail}"
    if disk_full(exc):
        text = f"disk full while writing {checkpoints_dir}: {free_space(checkpoints_dir)} ({text})"
    return text


def disk_full(exc: BaseException | None) -> bool:
    """ENOSPC anywhere in the chain; TensorStore (orbax's writer) reports it only in its message."""
    while exc is not None:
        if (isinstance(exc, OSError) and exc.errno == errno.ENOSPC) or "No space left on device" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def free_space(path: str) -> str:
    while path and not os.path.exists(path):
        path = os.path.dirname(path)
    usage = shutil.disk_usage(path or "/")
    return f"{usage.free} bytes free of {usage.total} on the file system of {path}"


def _record_attempt(run_dir: str, attempt) -> None:
    """The lead process records the attempt (on a slice every host would write the same timeline)."""
    import jax

    try:
        lead = jax.process_index() == 0
    except Exception:  # noqa: BLE001 - no backend came up: this process is the only one that can say why
        lead = True
    if lead:
        append_attempt(run_dir, attempt)


def _domain_eval(config_path: str, keys: dict, report) -> dict:
    """Per-source and per-eval-set losses of the final checkpoint; a failure is reported with the run, not hidden."""
    from marin_assets.train.domain_eval import domain_eval
    from marin_assets.train.eval_set_texts import read_manifest

    started = time.monotonic()
    run_dir = f"{keys['base_output_directory'].rstrip('/')}/{keys['run_name']}"
    manifest = read_manifest(run_dir)
    for name, why in manifest["missing"].items():
        report(f"eval set {name} not evaluated: {why}")
    eval_sets = {"eval_sets": {n: {k: v for k, v in e.items() if k != "glob"} for n, e in manifest["eval_sets"].items()},
                 "eval_sets_missing": manifest["missing"]}
    try:
        losses = domain_eval(config_path, keys, run_dir, {n: e["glob"] for n, e in manifest["eval_sets"].items()})
    except Exception as exc:  # noqa: BLE001 - the trained checkpoint stands; the run records why eval failed
        logging.getLogger(__name__).exception("per-domain evaluation failed")
        return {"domain_eval": {}, "domain_eval_error": f"{type(exc).__name__}: {exc}", **eval_sets}
    for name, result in losses.items():
        report(f"domain eval {name}: loss {result['loss']:.4f} over {result['tokens']:.0f} tokens")
    return {"domain_eval": losses, "domain_eval_s": round(time.monotonic() - started, 3), **eval_sets}


def _routing(config_path: str, keys: dict, report) -> dict:
    """An MoE run's per-layer expert shares and dropped fraction; a failure is recorded, not hidden."""
    from marin_assets.train.routing_stats import measure

    try:
        stats = measure(config_path, int(keys["steps"]))
    except Exception as exc:  # noqa: BLE001 - the trained checkpoint stands; the run records why
        logging.getLogger(__name__).exception("routing statistics failed")
        return {"routing": {}, "routing_error": f"{type(exc).__name__}: {exc}"}
    report(f"routing: max expert share {stats['max_share']:.3f} over {len(stats['layers'])} MoE layers")
    return {"routing": stats}


def _verify(handler: ProgressHandler, checkpoints_dir: str, steps: int) -> dict:
    final = steps - 1
    if handler.stopped is not None:
        raise TrainingFailed(
            f"MaxText stopped early at step {handler.last_step} of {final}: {handler.stopped} "
            "(exit code 0 hides this; check the data covers the budget and the pipeline settings)"
        )
    if handler.last_step is not None and handler.last_step != final:
        raise TrainingFailed(f"last completed step was {handler.last_step}, expected {final}")
    latest = latest_checkpoint_step(checkpoints_dir)
    if latest != final:
        raise TrainingFailed(f"latest complete checkpoint in {checkpoints_dir} is {latest}, expected {final}")
    digest, leaves = logical_hash(checkpoint_uri(checkpoints_dir, final))
    return {
        "checkpoint_step": final,
        "checkpoint_hash": digest,
        "checkpoint_leaves": leaves,
        "resumed_complete": handler.last_step is None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--log-file")
    args = parser.parse_args(argv)
    code = 0
    try:
        run(args.config, args.log_file)
    except SystemExit as exc:  # EXIT_PREEMPTED, or argparse-style exits
        code = 0 if exc.code is None else exc.code
        if not isinstance(code, int):  # sys.exit("message"): printed, exit 1, as the interpreter does
            print(code, file=sys.stderr)
            code = 1
    except BaseException as exc:  # noqa: BLE001 - printed like the interpreter would, then the same exit code
        # the cause goes to the run's log file too, where the launcher reads it (not just "code 1")
        reason = str(exc) if isinstance(exc, TrainingFailed) else f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            logging.getLogger(__name__).error("TrainingFailed: %s", reason)
        traceback.print_exc()
        code = 1
    exit_without_teardown(code)


def exit_without_teardown(code: int) -> None:
    """Exit once everything is reported and flushed, skipping interpreter and C++ teardown.

    XLA and TensorStore keep native threads whose destructors can abort the teardown
    ("terminate called without an active exception", SIGABRT) after a run finished and reported:
    the launcher would read exit -6 and fail a trained run. Nothing is left to clean up here
    (Pipes closed, checkpoint finalized, W&B finished), so the teardown is skipped.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
