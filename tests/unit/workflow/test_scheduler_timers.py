"""ppaudit.workflow.scheduler_timers: the Snakefile's onsuccess/onerror end Snakemake's pending
rate-limiter timers (the end-to-end check: tests/workflow/test_workflow.py's ``tiny_run`` with an
hour-long timespan)."""

from __future__ import annotations

import threading

from ppaudit.workflow.scheduler_timers import cancel_pending_timers


def test_pending_timers_end_at_once_without_running_and_finished_ones_are_not_counted():
    fired = []
    long = [threading.Timer(3600, fired.append, args=(i,)) for i in range(3)]
    done = threading.Timer(0, fired.append, args=("done",))
    other = threading.Event()
    worker = threading.Thread(target=other.wait, daemon=True)  # not a timer: left alone
    for t in (*long, done, worker):
        t.start()
    done.join(5)
    assert fired == ["done"]
    assert cancel_pending_timers() == 3
    for t in long:
        t.join(5)
        assert not t.is_alive()
    assert fired == ["done"] and worker.is_alive()
    assert cancel_pending_timers() == 0
    other.set()
    worker.join(5)

