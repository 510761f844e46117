"""An ansible-rulebook event source: Alertmanager's webhook (``webhook_config``) and a tick.

Each webhook delivery is one event ``{"hwaac_alerts": {"status", "firing", "resolved", "alerts": [labels...]}}``;
every ``tick_s`` seconds (0: never) one ``{"hwaac_tick": {"at": <unix seconds>}}``, so that a remediation sweep
also runs when no alert changes (hold-downs end, drained links come back). The remediation reads the alerts that
are active from Alertmanager's API itself, so one pending sweep covers every event before it starts: with
``state``, an event is dropped while the sweep of the last one has not started (docs/mitigation.md).
A delivery is answered at once, whatever happens to its event.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from aiohttp import web

DOCUMENTATION = r"""
---
short_description: Receive Alertmanager webhooks, and tick, for hwaac's remediation
description:
  - Listens for Alertmanager's webhook (version 4 payloads) and puts one event per delivery on the queue.
  - Puts a tick event every O(tick_s) seconds.
  - With O(state), puts no event while the sweep asked for by the last one has not started: that sweep reads the
    alerts after it starts, so it covers them.
options:
  host:
    description: Address to listen on.
    type: str
    default: "127.0.0.1"
  port:
    description: TCP port to listen on.
    type: int
    default: 5000
  tick_s:
    description: Seconds between tick events; 0 sends none.
    type: float
    default: 30
  state:
    description:
      - The remediation's state folder (C(hwaac remediate --state)); each sweep writes C(sweep-started) there.
      - Empty puts every event.
    type: str
    default: ""
  pending_s:
    description: Seconds after which an event whose sweep has not started no longer holds back the next one.
    type: float
    default: 120
"""

EXAMPLES = r"""
- aiinfra.hwaac.alertmanager:
    host: 127.0.0.1
    port: 5000
    tick_s: 30
    state: /var/lib/hwaac/mitigation
"""

STARTED = "sweep-started"  # hwaac.mitigation.engine.STARTED


def summary(payload: dict[str, Any]) -> dict[str, Any]:
    """The event of one webhook delivery: its status, the alert counts and each alert's labels."""
    alerts = [a for a in payload.get("alerts", []) if isinstance(a, dict)]
    return {
        "status": payload.get("status", ""),
        "firing": sum(1 for a in alerts if a.get("status") == "firing"),
        "resolved": sum(1 for a in alerts if a.get("status") == "resolved"),
        "alerts": [dict(a.get("labels", {}), status=a.get("status", "")) for a in alerts],
    }


class Pending:
    """Whether the sweep of the last event put on the queue has yet to start: ``sweep-started`` holds an older
    time than that event (for at most ``pending_s``, in case the sweep never starts)."""

    def __init__(self, state: str, pending_s: float) -> None:
        self.marker = Path(state) / STARTED if state else None
        self.pending_s = pending_s
        self.put_at: float | None = None

    def started(self) -> float:
        try:
            return float(self.marker.read_text()) if self.marker else 0.0
        except (OSError, ValueError):
            return 0.0

    def holds(self, now: float) -> bool:
        return (
            self.marker is not None
            and self.put_at is not None
            and now - self.put_at < self.pending_s
            and self.started() < self.put_at
        )

    def offer(self, queue: asyncio.Queue, event: dict[str, Any]) -> bool:
        """Put the event unless a pending sweep covers it, or one already waits on the queue (ansible-rulebook's
        holds one): then drop it. Never waits."""
        now = time.time()
        if self.holds(now):
            return False
        try:
            queue.put_nowait(event)
        except asyncio.QueueFull:
            return False
        self.put_at = now
        return True


async def main(queue: asyncio.Queue, args: dict[str, Any]) -> None:
    """Serve the webhook and tick until cancelled."""
    pending = Pending(str(args.get("state") or ""), float(args.get("pending_s", 120)))

    async def receive(request: web.Request) -> web.Response:
        try:
            payload = await request.json()
        except ValueError:
            return web.Response(status=400, text="not JSON")
        if not isinstance(payload, dict):
            return web.Response(status=400, text="not a webhook payload")
        pending.offer(queue, {"hwaac_alerts": summary(payload), "received_at": time.time()})
        return web.Response(status=202, text="accepted")

    app = web.Application()
    app.router.add_post("/{tail:.*}", receive)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, str(args.get("host", "127.0.0.1")), int(args.get("port", 5000)))
    await site.start()
    tick = float(args.get("tick_s", 30))
    try:
        while True:
            await asyncio.sleep(tick if tick > 0 else 3600)
            if tick > 0:
                pending.offer(queue, {"hwaac_tick": {"at": time.time()}})
    finally:
        await runner.cleanup()
