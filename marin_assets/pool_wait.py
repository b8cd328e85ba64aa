"""A run waiting for a pool slot sleeps instead of spinning a core, and stops on SIGTERM/SIGINT.

Dagster 1.13's in-process executor sleeps `ActiveExecution.sleep_interval()` between attempts to
claim a blocked step's pool slot, but `InstanceConcurrencyContext.interval_to_next_pending_claim_check`
returns `min([0, *times_to_next_check])`, never positive: the loop never sleeps. And while it waits,
Dagster's `capture_interrupts` has turned SIGTERM/SIGINT into a flag that this loop never reads, so
the run ignored them. The replacement returns the time to the next check (at most 1 s, so a signal is
seen promptly) and raises Dagster's own DagsterExecutionInterruptedError once a signal was captured:
nothing of the step has run yet, the run is marked failed and its pending claim released.
Imported by the code location, so CLI runs and run workers both get it; a no-op if Dagster renames
the method.
"""

import time

from dagster._core.errors import DagsterExecutionInterruptedError
from dagster._core.execution.plan import instance_concurrency_context as _icc
from dagster._utils.interrupts import pop_captured_interrupt

from marin_assets.core.waiting import note_signal

MAX_WAIT_S = 1.0


def _interval_to_next_pending_claim_check(self) -> float:
    if not self._pending_claims:
        return 0.0
    if pop_captured_interrupt():
        note_signal()  # the command that started this run stops too
        raise DagsterExecutionInterruptedError("interrupted while waiting for a pool slot")
    if not self._pending_timeouts:
        return MAX_WAIT_S
    return min(MAX_WAIT_S, max(0.0, min(self._pending_timeouts.values()) - time.time()))


if hasattr(_icc.InstanceConcurrencyContext, "interval_to_next_pending_claim_check"):
    _icc.InstanceConcurrencyContext.interval_to_next_pending_claim_check = _interval_to_next_pending_claim_check
