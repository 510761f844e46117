"""Reader of nccl-tests ``-J`` JSON files (``src/util.cu``, JSON_FILE_VERSION 2): the same facts as the stdout
reader, with the verdicts of :mod:`.nccl_tests_verdicts`. Never raises.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from hwaac.health.parsers.nccl_tests_model import TOOL, NcclRank, NcclRow, NcclRun, NcclTestsResult
from hwaac.health.parsers.nccl_tests_verdicts import judge

# the verdict nccl-tests writes for an ``okay`` of true or false
_VERDICTS: dict[bool | None, str] = {True: "OK", False: "FAILED"}


def _json_num(value: Any, what: str, unknown: list[str]) -> float | None:
    """A JSON number; util.cu writes NaN as the string "nan" (jsonDouble) -- that and anything else is None."""
    if isinstance(value, bool) or value is None:
        if value is not None:
            unknown.append(f"{what} is a boolean")
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    unknown.append(f"{what} {value!r} is not a finite number")
    return None


def _json_bool(value: Any) -> bool | None:
    """util.cu's jsonBool writes the strings "true"/"false"; accept real booleans too."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def _json_run(obj: Any, where: str, unknown: list[str]) -> NcclRun | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        unknown.append(f"{where} is not an object")
        return None
    time_key = "time" if "time" in obj else "cpu_time"
    wrong_raw = obj.get("nwrong")
    wrong = _json_num(wrong_raw, f"{where}.nwrong", unknown) if wrong_raw is not None else None
    return NcclRun(
        time_us=_json_num(obj.get(time_key), f"{where}.{time_key}", unknown),
        algbw_gbytes_per_s=_json_num(obj.get("alg_bw"), f"{where}.alg_bw", unknown),
        busbw_gbytes_per_s=_json_num(obj.get("bus_bw"), f"{where}.bus_bw", unknown),
        wrong=None if wrong is None else int(wrong),
    )


def _json_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)  # root is written as the string "%6i" ("    -1")
    return None


def parse_nccl_tests_json(raw: str, *, version: str | None = None, exit_code: int | None = None) -> NcclTestsResult:
    """Parse the file nccl-tests writes with ``-J out.json`` into the same :class:`NcclTestsResult`.

    Keys (``util.cu``, JSON_FILE_VERSION 2): ``config`` {nthreads, ngpus, minimum_bytes, maximum_bytes,
    step_factor | step_bytes, warmup_iters, iterations, aggregated_iterations, validation, graph, ...},
    ``devices`` [{rank, group, pid, hostname, device, device_hex, device_info}], ``results`` [{size, count, type,
    redop, root (a string), out_of_place {time | cpu_time, alg_bw, bus_bw, nwrong (null with -c 0)}, in_place
    {...}}], ``out_of_bounds`` {count, okay}, ``average_bus_bandwidth`` {bandwidth, okay: bool | "unchecked"},
    ``errors`` [..], ``args``, ``env``, ``nccl_version``. util.cu writes booleans as the strings "true"/"false"
    and NaN as "nan"; both are handled.

    Raises:
        Nothing: invalid JSON or missing keys become ``unknown`` reasons.
    """
    res = NcclTestsResult(tool=f"{TOOL} -J", version=version or "", exit_code=exit_code)
    try:
        doc = json.loads(raw) if isinstance(raw, str) and raw.strip() else None
    except ValueError as exc:
        res.unknown.append(f"not valid JSON: {exc}")
        doc = None
    if not isinstance(doc, dict):
        if not res.unknown:
            res.unknown.append("empty output" if not (isinstance(raw, str) and raw.strip()) else "not a JSON object")
        return res

    args = doc.get("args")
    if isinstance(args, list) and args and isinstance(args[0], str):
        res.collective = args[0].rsplit("/", 1)[-1]
    env = doc.get("env")
    if isinstance(env, list):
        for item in env:
            if isinstance(item, str) and item.startswith("NCCL_ALGO="):
                res.algorithms.append(item.split("=", 1)[1])
    if isinstance(doc.get("nccl_version"), int):
        res.nccl_library = doc["nccl_version"]

    cfg = doc.get("config")
    if isinstance(cfg, dict):
        for attr, key in (
            ("n_threads", "nthreads"),
            ("n_gpus", "ngpus"),
            ("min_bytes", "minimum_bytes"),
            ("max_bytes", "maximum_bytes"),
            ("step_factor", "step_factor"),
            ("step_bytes", "step_bytes"),
            ("warmup_iters", "warmup_iters"),
            ("iters", "iterations"),
            ("agg_iters", "aggregated_iterations"),
            ("validation", "validation"),
            ("graph", "graph"),
        ):
            setattr(res, attr, _json_int(cfg.get(key)))
    else:
        res.unknown.append("no 'config' object")

    # util.cu writes "devices" inside "config" (writeDeviceReport closes config after the device list).
    devices = (cfg.get("devices") if isinstance(cfg, dict) else None) or doc.get("devices") or []
    for i, dev in enumerate(devices if isinstance(devices, list) else []):
        if not isinstance(dev, dict) or _json_int(dev.get("rank")) is None:
            res.unknown.append(f"devices[{i}] is unreadable")
            continue
        res.ranks.append(
            NcclRank(
                rank=_json_int(dev.get("rank")) or 0,
                group=_json_int(dev.get("group")),
                pid=_json_int(dev.get("pid")) or 0,
                host=str(dev.get("hostname", "")),
                device=_json_int(dev.get("device")) or 0,
                bus_id=str(dev.get("device_hex", "")),
                gpu_name=str(dev.get("device_info", "")),
            )
        )

    results = doc.get("results")
    if not isinstance(results, list):
        res.unknown.append("no 'results' list")
        results = []
    for i, item in enumerate(results):
        if not isinstance(item, dict) or _json_int(item.get("size")) is None:
            res.unknown.append(f"results[{i}] has no size")
            continue
        oop = _json_run(item.get("out_of_place"), f"results[{i}].out_of_place", res.unknown)
        inp = _json_run(item.get("in_place"), f"results[{i}].in_place", res.unknown)
        res.rows.append(
            NcclRow(
                size_bytes=_json_int(item.get("size")) or 0,
                count=_json_int(item.get("count")) or 0,
                dtype=str(item.get("type", "")),
                redop=item.get("redop"),
                root=_json_int(item.get("root")),
                out_of_place=oop,
                in_place=inp,
                line=json.dumps(item, separators=(",", ":")),
            )
        )
    res.layout = "wrong"

    oob = doc.get("out_of_bounds")
    if isinstance(oob, dict):
        res.out_of_bounds = _json_int(oob.get("count"))
        res.out_of_bounds_ok = _json_bool(oob.get("okay"))
    avg = doc.get("average_bus_bandwidth")
    if isinstance(avg, dict):
        res.avg_busbw_gbytes_per_s = _json_num(avg.get("bandwidth"), "average_bus_bandwidth.bandwidth", res.unknown)
        okay = avg.get("okay")
        res.avg_busbw_verdict = None if okay == "unchecked" else _VERDICTS.get(_json_bool(okay))
    errors = [e for e in doc.get("errors") or [] if isinstance(e, str) and e.strip()]
    judge(res, [], [], [], [], json_errors=errors)
    return res
