"""The NetBox API client of the sync: pynetbox with a request counter and one-line errors, and the read cache
read-only callers share.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from functools import partial
from typing import Any

import pynetbox
import requests

from hwaac.devnetbox import api
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync.desired import OWNER_TAG

SUPPORTED = "4.7."
PAGE = 1000
ENDPOINT = {
    "tags": "extras.tags",
    "custom-fields": "extras.custom_fields",
    "sites": "dcim.sites",
    "manufacturers": "dcim.manufacturers",
    "device-roles": "dcim.device_roles",
    "rirs": "ipam.rirs",
    "device-types": "dcim.device_types",
    "interface-templates": "dcim.interface_templates",
    "asn-ranges": "ipam.asn_ranges",
    "asns": "ipam.asns",
    "devices": "dcim.devices",
    "prefixes": "ipam.prefixes",
    "cables": "dcim.cables",
    "ip-addresses": "ipam.ip_addresses",
    "interfaces": "dcim.interfaces",
    "cable-terminations": "dcim.cable_terminations",
    "locations": "dcim.locations",
    "roles": "ipam.roles",
    "vrfs": "ipam.vrfs",
    "journal-entries": "extras.journal_entries",
}


class SyncError(NetBoxError):
    """The sync could not run or stopped (one line; never carries the token)."""


class ReadCache:
    """Answers to identical reads, shared by the read-only clients of one process until :meth:`clear`.

    Terraform refreshes every plane of a fabric at once, and each plane's read asks NetBox mostly the same
    questions (the fabric's owned objects, the planes' claims, the site's cabled interfaces): with one cache the
    second asker waits for the first answer instead of sending the request again. Whoever writes must
    :meth:`clear` it first. Every caller gets its own copy of an answer (the sync annotates records it reads).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[Hashable, Future[Any]] = {}

    def get(self, key: Hashable, fetch: Callable[[], Any]) -> Any:
        with self._lock:
            fut = self._answers.get(key)
            mine = fut is None
            if fut is None:
                fut = self._answers[key] = Future()
        if mine:
            try:
                fut.set_result(fetch())
            except BaseException as exc:
                with self._lock:
                    self._answers.pop(key, None)  # a failed read is asked again next time
                fut.set_exception(exc)
        return copy.deepcopy(fut.result())

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()


def _frozen(v: Any) -> Hashable:
    return tuple(_frozen(x) for x in v) if isinstance(v, list | tuple) else v


class Client:
    """pynetbox API with a request counter; errors become one-line SyncErrors without the token.

    With a :class:`ReadCache` (``cache``), :meth:`probe` and :meth:`read` answer from it: for clients that only
    read (a Terraform refresh), never for a sync that writes."""

    def __init__(self, url: str, token: str, timeout: float = 600.0, cache: ReadCache | None = None) -> None:
        self.url, self._token = url.rstrip("/"), token
        self.cache = cache
        self._who = (self.url, hashlib.sha256(token.encode()).hexdigest())  # cache key: the NetBox and the token
        self.requests: dict[str, int] = {}
        self._lock = threading.Lock()
        self.nb = pynetbox.api(self.url, token=token)
        session = requests.Session()
        session.hooks["response"].append(self._count)
        self.nb.http_session = session
        self.timeout = timeout

    def _count(self, resp: requests.Response, *args: Any, **kwargs: Any) -> None:
        m = resp.request.method or "?"
        with self._lock:  # reads run on several threads
            self.requests[m] = self.requests.get(m, 0) + 1

    def _clean(self, text: str) -> str:
        text = " ".join(str(text).split())
        if self._token:
            text = text.replace(self._token, "<token>")
            if "." in self._token:
                text = text.replace(self._token.split(".", 1)[1], "<token>")
        return text[:400]

    def endpoint(self, kind: str):
        app, name = ENDPOINT[kind].split(".")
        return getattr(getattr(self.nb, app), name)

    def probe(self) -> str:
        """Check URL, token and version (``/api/status/``); return the NetBox version."""
        if self.cache is not None:
            return str(self.cache.get((*self._who, "probe"), self._probe))
        return self._probe()

    def _probe(self) -> str:
        st = api.status(self.url, self._token)
        version = str(st.get("netbox-version", "?"))
        if not version.startswith(SUPPORTED):
            raise SyncError(f"NetBox at {self.url} runs version {version}; hwaac netbox sync supports {SUPPORTED}x")
        # the status endpoint answers any token; a token without rights fails here
        self.call("GET", "tags", lambda: list(self.endpoint("tags").filter(slug=OWNER_TAG, limit=1)))
        return version

    def call(self, what: str, kind: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except pynetbox.RequestError as exc:
            code = getattr(exc.req, "status_code", "?")
            if code in (401, 403):
                raise SyncError(f"NetBox at {self.url} rejected the API token (HTTP {code})") from None
            raise SyncError(
                f"NetBox at {self.url} refused {what} {kind} (HTTP {code}): {self._clean(exc.error)}"
            ) from None
        except requests.RequestException as exc:
            raise SyncError(
                f"NetBox at {self.url} stopped answering during {what} {kind}: "
                f"{self._clean(type(exc).__name__ + ': ' + str(exc))}"
            ) from None

    def ensure(self, kind: str, key: str, body: dict[str, Any]) -> None:
        """Create ``body`` as an object of ``kind`` unless NetBox holds one whose field ``key`` (``name``, ``slug``)
        has the value ``body`` gives it; an existing one is left as it is."""
        if not self.read(kind, f"id,{key}", **{key: body[key]}):
            self.call("POST", kind, partial(self.endpoint(kind).create, body))

    def count(self, kind: str, **params: Any) -> int:
        """How many objects of ``kind`` match ``params`` (one GET with limit=1)."""
        ep = self.endpoint(kind)
        return int(self.call("GET", kind, lambda: ep.count(**params)))

    def read(self, kind: str, fields: str, **params: Any) -> list[dict]:
        ep = self.endpoint(kind)
        from pynetbox.core.query import Request

        def go() -> list[dict]:
            return list(
                Request(
                    base=ep.url,
                    http_session=self.nb.http_session,
                    token=self._token,
                    filters={**params, "fields": fields},
                    limit=PAGE,
                ).get()
            )

        if self.cache is not None:
            key = (*self._who, kind, fields, tuple(sorted((k, _frozen(v)) for k, v in params.items())))
            return self.cache.get(key, lambda: self.call("GET", kind, go))
        return self.call("GET", kind, go)
