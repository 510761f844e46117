# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Run a command on the managed host with a time limit, through ``AnsibleModule.run_command``.

``run_command`` has no timeout of its own; ``before_communicate_callback`` hands over the process, and a timer
kills it when the limit passes. Standard library only (host side).
"""

from __future__ import annotations

import threading
import time


def run_timed(module, argv, timeout, environ_update=None):
    """Run ``argv`` (a list, no shell). Returns ``{"rc", "stdout", "stderr", "seconds", "timed_out"}``; ``rc`` is
    None when the command could not start (``stderr`` says why). Output is decoded as UTF-8 with replacement."""
    expired = threading.Event()
    timers = []

    def arm(proc):
        def kill():
            expired.set()
            proc.kill()

        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timers.append(timer)
        timer.start()

    start = time.monotonic()
    try:
        rc, out, err = module.run_command(
            list(argv), before_communicate_callback=arm, handle_exceptions=False, expand_user_and_vars=False,
            environ_update=environ_update or {}, errors="replace",
        )
    except OSError as exc:
        return {"rc": None, "stdout": "", "stderr": f"cannot run {argv[0]}: {exc.strerror or exc}",
                "seconds": round(time.monotonic() - start, 3), "timed_out": False}
    finally:
        for timer in timers:
            timer.cancel()
    return {"rc": rc, "stdout": out, "stderr": err, "seconds": round(time.monotonic() - start, 3),
            "timed_out": expired.is_set()}
