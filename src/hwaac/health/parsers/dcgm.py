"""Reader of ``dcgmi diag -r N -j`` (DCGM 2.x, 3.x and 4.x layouts, with or without ``--iterations``): facts only.

The formats, sources and rules in full: ``docs/health-modules.md``, section "dcgmi diag JSON".
"""

from __future__ import annotations

import re
from typing import Any

from hwaac.health.parsers.dcgm_model import (
    DCGM_ERROR_NAMES,
    STATUS_WORDS,
    DcgmDiagResult,
    DcgmEntity,
    DcgmTestResult,
    DcgmWarning,
    as_list,
    guarded,
    int_or_none,
    load_json,
    sentinel_name,
    severity_enum_for,
    severity_name,
    subject,
)


def _gpu_ids(result: dict[str, Any]) -> tuple[str, list[int], str | None]:
    """(entity_group, gpu ids, problem) of one result in any layout."""
    if "entity_id" in result:
        group = str(result.get("entity_group") or "GPU")
        entity = int_or_none(result.get("entity_id"))
        if entity is None:
            return group, [], f"entity_id {result.get('entity_id')!r} is not an integer"
        return group, [entity], None
    raw = result.get("gpu_id", result.get("gpu_ids"))
    if raw is None:
        return "", [], None  # a node-wide result (2.x deployment tests)
    ids = [int_or_none(part) for part in str(raw).split(",") if part.strip()]
    if any(i is None for i in ids):
        return "GPU", [], f"gpu id {raw!r} is not a list of integers"
    return "GPU", [i for i in ids if i is not None], None


def _warnings(raw: Any, enum: str) -> list[DcgmWarning]:
    out: list[DcgmWarning] = []
    for item in as_list(raw):
        if isinstance(item, dict):
            error_id = int_or_none(item.get("error_id"))
            warning = DcgmWarning(
                message=str(item.get("warning", "")),
                error_id=error_id,
                error_name=DCGM_ERROR_NAMES.get(error_id) if error_id is not None else None,
                error_category=int_or_none(item.get("error_category")),
                error_severity=int_or_none(item.get("error_severity")),
            )
        else:
            warning = DcgmWarning(message=str(item))
        warning.severity_name = severity_name(warning.error_severity, enum)
        out.append(warning)
    return out


def _read_result(
    res: Any, test: str, category: str, enum: str, iteration: int | None, out: DcgmDiagResult
) -> DcgmTestResult | None:
    where = f"test {test!r} ({category})" + (f" iteration {iteration}" if iteration is not None else "")
    if not isinstance(res, dict):
        out.unknown.append(f"{where}: a result is not an object: {res!r:.100}")
        return None
    group, ids, problem = _gpu_ids(res)
    if problem:
        out.unknown.append(f"{where}: {problem}")
    raw_status = str(res.get("status", ""))
    status = STATUS_WORDS.get(raw_status.strip().lower(), "")
    info = [str(i) for i in as_list(res.get("info"))]
    _note_sentinels(test, info, out)
    warnings = _warnings(res.get("warnings"), enum)
    if not status:
        out.unknown.append(f"{where} {subject(group, ids)}: unrecognised status {raw_status!r}")
    return DcgmTestResult(test, category, group, ids, status, None, warnings, info, iteration)


def _read_categories(diag: dict[str, Any], enum: str, iteration: int | None, out: DcgmDiagResult) -> None:
    categories = diag.get("test_categories")
    if categories is None:
        return
    if not isinstance(categories, list):
        out.unknown.append("test_categories is not a list")
        return
    for cat in categories:
        if cat is None:
            out.notes.append("a null entry in test_categories (DCGM 3.x writes them): skipped")
            continue
        if not isinstance(cat, dict) or not isinstance(cat.get("tests"), list):
            out.unknown.append(f"a test category is not an object with a tests list: {cat!r:.100}")
            continue
        category = str(cat.get("category", ""))
        for test in cat["tests"]:
            if test is None:
                out.notes.append(f"category {category!r}: a null entry between tests (DCGM 3.x writes them): skipped")
                continue
            if not isinstance(test, dict) or "name" not in test:
                out.unknown.append(f"category {category!r}: a test without a name: {test!r:.100}")
                continue
            results = test.get("results")
            if not isinstance(results, list):
                out.unknown.append(f"test {test['name']!r}: results is not a list")
                continue
            raw_summary = test.get("test_summary")
            summary = raw_summary if isinstance(raw_summary, dict) else {}
            _note_sentinels(str(test["name"]), as_list(summary.get("info")), out)
            if not results and summary.get("status"):
                results = [summary]  # a test with only its summary: read it as one node-wide result
            for res in results:
                if res is None:
                    out.notes.append(f"test {test['name']!r}: a null result entry: skipped")
                    continue
                parsed = _read_result(res, str(test["name"]), category, enum, iteration, out)
                if parsed is not None:
                    out.results.append(parsed)


_BIG_NUMBER = re.compile(r"(?<![\d.])(\d{9,20}(?:\.\d+)?)(?!\d)")


def _note_sentinels(test: str, lines: list[Any], out: DcgmDiagResult) -> None:
    """Note info lines that quote a DCGM blank sentinel: DCGM could not read a value, so that sub-check was skipped."""
    for line in lines:
        for number in _BIG_NUMBER.findall(str(line)):
            blank = sentinel_name(float(number) if "." in number else int(number))
            if blank:
                out.notes.append(f"test {test!r}: info quotes the DCGM blank sentinel {blank} ({number}): {line}")


def _read_entities(doc: dict[str, Any], out: DcgmDiagResult) -> None:
    for group in as_list(doc.get("entity_groups")):
        if not isinstance(group, dict):
            continue
        name = str(group.get("entity_group", ""))
        for ent in as_list(group.get("entities")):
            if not isinstance(ent, dict) or int_or_none(ent.get("entity_id")) is None:
                out.notes.append(f"entity_groups {name!r}: an entity without an integer entity_id: {ent!r:.100}")
                continue
            out.entities.append(_entity(name, int_or_none(ent["entity_id"]) or 0, ent.get("serial_num"), ent, out))
    serials = doc.get("GPU Device Serials")
    if isinstance(serials, dict):
        for key, serial in serials.items():
            if int_or_none(key) is not None:
                out.entities.append(_entity("GPU", int(key), serial, {}, out))
    elif isinstance(serials, list):  # positional, as some writers do; kept by position
        for index, serial in enumerate(serials):
            out.entities.append(_entity("GPU", index, serial, {}, out))


def _entity(group: str, entity_id: int, serial: Any, raw: dict[str, Any], out: DcgmDiagResult) -> DcgmEntity:
    entity = DcgmEntity(group, entity_id, device_id=str(raw["device_id"]) if raw.get("device_id") else None)
    if serial is None or str(serial).strip() == "":
        entity.serial_unreadable = "absent"
    elif (blank := sentinel_name(serial)) is not None:
        entity.serial_unreadable = f"{serial!s} (DCGM blank sentinel {blank})"
    else:
        entity.serial = str(serial).strip()
    if entity.serial_unreadable:
        out.notes.append(f"{group} {entity_id}: serial unreadable: {entity.serial_unreadable}")
    return entity


def _string_value(value: Any, what: str, out: DcgmDiagResult) -> str | None:
    if value is None or str(value).strip() == "":
        return None
    if (blank := sentinel_name(value)) is not None:
        out.notes.append(f"{what} is the DCGM blank sentinel {blank}")
        return None
    return str(value).strip()


def _read_document(doc: dict[str, Any], iteration: int | None, out: DcgmDiagResult, version: str | None) -> None:
    """One diag document (the whole output, or one ``iterations[]`` element)."""
    if isinstance(doc.get("DCGM Diagnostic"), dict):
        layout, diag = "4.x", doc["DCGM Diagnostic"]
    elif isinstance(doc.get("DCGM GPU Diagnostic"), dict):
        diag = doc["DCGM GPU Diagnostic"]
        layout = "3.x" if _has_key(diag, "gpu_id") or "GPU Device Serials" in doc else "2.x"
    else:
        out.unknown.append(f"no 'DCGM Diagnostic' or 'DCGM GPU Diagnostic' object; keys: {sorted(doc)[:10]}")
        return
    out.layout = out.layout or layout
    raw_metadata = doc.get("metadata")
    metadata = raw_metadata if isinstance(raw_metadata, dict) else {}
    found_version = metadata.get("version") or doc.get("version") or diag.get("version")
    out.version = out.version or _string_value(found_version, "DCGM version", out) or ""
    driver = metadata.get("Driver Version Detected") or doc.get("Driver Version Detected")
    driver = driver or diag.get("Driver Version Detected")
    out.driver_version = out.driver_version or _string_value(driver, "driver version", out)
    out.severity_enum = severity_enum_for(version or out.version, out.layout)
    if diag.get("runtime_error"):
        out.runtime_error = str(diag["runtime_error"])
    _read_categories(diag, out.severity_enum, iteration, out)
    _read_entities(doc, out)


def _has_key(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(_has_key(v, key) for v in node.values())
    if isinstance(node, list):
        return any(_has_key(v, key) for v in node)
    return False


def parse_diag_json(raw: str, *, exit_code: int | None = None, version: str | None = None) -> DcgmDiagResult:
    """Read ``dcgmi diag -r N -j`` output (DCGM 2.x, 3.x and 4.x layouts, with or without ``--iterations``).

    Args:
        raw: the command's stdout.
        exit_code: the command's exit status when known (256+rc as the shell sees it, or -signal from Python); kept
            for the grading.
        version: the DCGM version when known (``dcgmi -v``); it wins over the version in the document and selects the
            severity numbering.

    Returns:
        A :class:`DcgmDiagResult` of facts, not yet graded (its status is UNKNOWN until
        :func:`hwaac.health.dcgm_grading.grade_diag` runs; :func:`hwaac.health.checks.check_dcgm` does). ``unknown``
        holds why the JSON could not be read completely: not JSON, truncated, no diagnostic object, a result that is
        not an object, an unrecognised status, no result at all, or nothing that passed or failed (every result Skip
        or Not Run: nothing was verified). Never raises.
    """
    out = DcgmDiagResult(exit_code=exit_code)
    guarded(out, _read_diag, raw, out, version)
    return out


def _read_diag(raw: str, out: DcgmDiagResult, version: str | None) -> None:
    doc = load_json(raw, out.notes, out.unknown)
    if isinstance(doc, dict):
        if isinstance(doc.get("iterations"), list):
            for index, item in enumerate(doc["iterations"]):
                if isinstance(item, dict):
                    _read_document(item, index, out, version)
                else:
                    out.unknown.append(f"iterations[{index}] is not an object")
            out.overall_result = str(doc["Overall Result"]) if "Overall Result" in doc else None
        else:
            _read_document(doc, None, out, version)
        if version:
            out.version = version
    elif doc is not None:
        out.unknown.append(f"the JSON document is a {type(doc).__name__}, not an object")
    if out.layout and not out.runtime_error:
        if not out.results:
            out.unknown.append("the document holds no test result")
        elif not any(r.status in ("Pass", "Fail", "Warn") for r in out.results):
            out.unknown.append("no test passed: every result is Skip or Not Run, so nothing was verified")


__all__ = ["parse_diag_json"]
