"""Snakemake's job-rate limiter, kept cheap and kept from delaying the exit (issue 35).

Snakemake 9's local scheduler (``snakemake.scheduling.job_scheduler.JobScheduler``) re-arms one
``threading.Timer`` of the rate limiter's timespan at the end of every scheduling round, and every
round a timer starts arms the next: each finished job starts one more such chain. After ``n`` job
events the scheduler re-checks every pending job about ``n / timespan`` times a second. The
paper-shape test's Snakemake process (about 110 jobs; DAG and job handling included) took 34 CPU-s
at Snakemake's default of 100 jobs per 1 s in a whole ``make test``, and run alone 15.4 CPU-s at the
default, 10.8 at 1000 per 10 s and 7.7 at 10000 per 10 min (29 Nov 2026, score_s about 0.16).

The cure is a longer timespan: ``max-jobs-per-timespan: 1000/10s`` in ``workflow/profiles/default``,
which the workflow tests pass too (locally it never limits). Its price was the exit: the timers are
non-daemon threads, so the interpreter waited for the last one to fire, up to one timespan after the
last job. :func:`cancel_pending_timers`, called by the Snakefile's ``onsuccess`` and ``onerror``
handlers (after the last job, before Snakemake returns), removes that wait. Ctrl-C reaches neither
handler (Snakemake unwinds with a traceback), so an interrupted run may still wait one timespan;
that is why the timespan stays at 10 s rather than minutes.
"""

from __future__ import annotations

import threading

__all__ = ["cancel_pending_timers"]


def cancel_pending_timers() -> int:
    """Cancel every pending :class:`threading.Timer` of this process; returns how many.

    A cancelled timer's thread ends at once without running its function. Meant for the end of a
    Snakemake run, when the scheduler's re-evaluation timers have nothing left to wake.
    """
    pending = [t for t in threading.enumerate() if isinstance(t, threading.Timer) and not t.finished.is_set()]
    for timer in pending:
        timer.cancel()
    return len(pending)
