"""A checkpoint at preemption on one host: wraps MaxText's `checkpointing.maybe_save_checkpoint` (a monkey-patch).

MaxText has no public hook for "save this step and stop": its own preemption path asks JAX's
distributed preemption service, which one CPU host does not run. So the train loop's per-step call
is replaced by a wrapper that calls the original, then saves and stops when a signal asked for it.
The test fastpath/test_tripwires.py pins the patched function's signature and the names this
wrapper calls, naming the installed MaxText version when an upgrade changes them.
"""

from __future__ import annotations

PATCHED = ("maxtext.common.checkpointing", "maybe_save_checkpoint")
SIGNATURE = "(checkpoint_manager, state, config, data_iterator, step=None)"
CALLED = ("all_steps", "save_checkpoint", "wait_until_finished")  # checkpointing functions the wrapper calls


def preemption_checkpoints(preemption) -> None:
    """Make MaxText save a checkpoint of the step it just finished and stop, once preemption (trainer_guard.Preemption) is asked.

    MaxText's own preemption path needs JAX's distributed preemption service (absent on one CPU host),
    so this wraps `checkpointing.maybe_save_checkpoint`, which the train loop calls after every step.
    With several processes (a multi-host slice) MaxText's own path decides instead (the run's config
    has enable_autocheckpoint): JAX's preemption sync point answers the same on every host, so all of
    them save the same step and stop together; a host that stopped on its own signal alone would
    leave the others waiting in the save's collectives. This wrapper then only records the step.
    """
    import jax
    from maxtext.common import checkpointing
    from maxtext.utils import exceptions

    original = checkpointing.maybe_save_checkpoint

    def maybe_save_checkpoint(checkpoint_manager, state, config, data_iterator, step=None):
        if jax.process_count() > 1:
            try:
                original(checkpoint_manager, state, config, data_iterator, step)
            except exceptions.StopTraining:
                preemption.signal_name = preemption.signal_name or "SIGTERM (preemption sync point)"
                preemption.checkpoint_step = int(step) if step is not None else None
                raise
            return
        original(checkpoint_manager, state, config, data_iterator, step)
        if step is None or checkpoint_manager is None or not preemption.requested.is_set():
            return
        step = int(step)
        if step not in checkpointing.all_steps(checkpoint_manager):
            checkpointing.save_checkpoint(checkpoint_manager, step, state, config, data_iterator, force=True)
        checkpointing.wait_until_finished(checkpoint_manager)
        preemption.checkpoint_step = step
        raise exceptions.StopTraining(f"preempted ({preemption.signal_name}); checkpoint {step} saved")

    checkpointing.maybe_save_checkpoint = maybe_save_checkpoint
