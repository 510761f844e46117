"""An ansible-rulebook event source: Alertmanager's webhook (``webhook_config``) and a tick.

Each webhook delivery is one event ``{"hwaac_alerts": {"status", "firing", "resolved", "alerts": [labels...]}}``;
every ``tick_s`` seconds (0: never) one ``{"hwaac_tick": {"at": <unix seconds>}}``, so that a remediation sweep
also runs when no alert changes (hold-downs end, drained links come back). The remediation reads the alerts that
are active from Alertmanager's API itself, so a lost delivery costs one tick, not a missed fault.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

DOCUMENTATION = r"""
---
short_description: Receive Alertmanager webhooks, and tick, for hwaac's remediation
description:
  - Listens for Alertmanager's webhook (version 4 payloads) and puts one event per delivery on the queue.
  - Puts a tick event every O(tick_s) seconds.
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
"""

EXAMPLES = r"""
- aiinfra.hwaac.alertmanager:
    host: 127.0.0.1
    port: 5000
    tick_s: 30
"""


def summary(payload: dict[str, Any]) -> dict[str, Any]:
    """The event of one webhook delivery: its status, the alert counts and each alert's labels."""
    alerts = [a for a in payload.get("alerts", []) if isinstance(a, dict)]
    return {"status": payload.get("status", ""),
            "firing": sum(1 for a in alerts if a.get("status") == "firing"),
            "resolved": sum(1 for a in alerts if a.get("status") == "resolved"),
            "alerts": [dict(a.get("labels", {}), status=a.get("status", "")) for a in alerts]}


async def main(queue: asyncio.Queue, args: dict[str, Any]) -> None:
    """Serve the webhook and tick until cancelled."""

    async def receive(request: web.Request) -> web.Response:
        try:
            payload = await request.json()
        except ValueError:
            return web.Response(status=400, text="not JSON")
        if not isinstance(payload, dict):
            return web.Response(status=400, text="not a webhook payload")
        await queue.put({"hwaac_alerts": summary(payload), "received_at": time.time()})
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
                await queue.put({"hwaac_tick": {"at": time.time()}})
    finally:
        await runner.cleanup()
