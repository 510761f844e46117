"""The few NetBox REST calls the local NetBox needs: status probe and v2 token provisioning (standard library only).

Sources: NetBox REST API docs (``/api/status/``; ``POST /api/users/tokens/provision/`` returns the v2 token's
``key`` and secret ``token``; clients send ``Authorization: Bearer nbt_<key>.<token>``).
Errors never include the token.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from hwaac.errors import NetBoxError

TOKEN_PREFIX = "nbt_"  # NetBox users/constants.py: v2 tokens


def _request(
    method: str, url: str, *, token: str | None = None, body: Any = None, timeout: float = 10.0
) -> tuple[int, Any]:
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            code = resp.status
    except urllib.error.HTTPError as exc:
        raw, code = exc.read(), exc.code
    try:
        return code, json.loads(raw or b"null")
    except ValueError:
        return code, raw.decode(errors="replace")[:200]


def _detail(payload: Any) -> str:
    if isinstance(payload, dict) and "detail" in payload:
        return str(payload["detail"])
    return str(payload)[:200]


def answers(url: str, timeout: float = 2.0) -> bool:
    """True when a NetBox (any HTTP answer from ``/api/status/``) listens at ``url``."""
    try:
        _request("GET", f"{url}/api/status/", timeout=timeout)
    except (OSError, urllib.error.URLError):
        return False
    return True


def status(url: str, token: str, timeout: float = 10.0) -> dict[str, Any]:
    """``GET /api/status/`` with the token. Raises NetBoxError (one line) when unreachable or rejected."""
    try:
        code, payload = _request("GET", f"{url}/api/status/", token=token, timeout=timeout)
    except (OSError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NetBoxError(f"NetBox at {url} is unreachable: {reason}") from None
    if code in (401, 403):
        raise NetBoxError(f"NetBox at {url} rejected the API token (HTTP {code}: {_detail(payload)})")
    if code != 200 or not isinstance(payload, dict):
        raise NetBoxError(f"NetBox at {url}: GET /api/status/ answered HTTP {code}: {_detail(payload)}")
    return payload


def provision_token(url: str, username: str, password: str, description: str) -> str:
    """Create a v2 API token for ``username`` and return it as ``nbt_<key>.<token>``."""
    code, payload = _request(
        "POST",
        f"{url}/api/users/tokens/provision/",
        timeout=60,
        body={"username": username, "password": password, "description": description},
    )
    if code != 201 or not isinstance(payload, dict) or not payload.get("key") or not payload.get("token"):
        detail = _detail(payload) if code != 201 else "no key/token in the answer"
        raise NetBoxError(f"NetBox at {url}: token provisioning failed (HTTP {code}: {detail})")
    return f"{TOKEN_PREFIX}{payload['key']}.{payload['token']}"
