# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Lustre client packages: which to install for a distribution and flavour, which are installed, and whether the
o2ib LND (``ko2iblnd``) was built for the running kernel and RDMA stack.

Pure functions on tool output; standard library only (host side). The package names, the RDMA stack detection
(``ofed_info -s``), the rule of :func:`choose_flavor` for ``flavor: auto``, the four checks of
:func:`verify_o2ib` (``filename``, ``vermagic``, ``mlx_compat``, the CRCs of the imported symbols against
``Module.symvers``), when a check is *partial*, and why the OFED/DOCA release the module was built against is
not compared: docs/modules/lustre.md, "Client packages and the o2ib LND", with the source of each fact.
"""

from __future__ import annotations

import re

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_symvers import crc_mismatches

FAMILIES = ("RedHat", "Debian")
FLAVORS = ("kmod", "dkms", "auto")

_OFED = re.compile(r"^(?P<name>MLNX_OFED_LINUX|OFED-internal|OFED)-(?P<version>\d[\w.\-]*?):?$")
STACK_NAMES = {"MLNX_OFED_LINUX": "MLNX_OFED", "OFED-internal": "DOCA-OFED", "OFED": "OFED"}


def os_family(os_release: str) -> str | None:
    """``RedHat`` or ``Debian`` from the text of ``/etc/os-release`` (``ID``, ``ID_LIKE``: os-release(5)), else
    None (an unknown distribution). Never raises."""
    values = {}
    for line in os_release.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip('"').strip("'").lower()
    ids = {values.get("ID", "")} | set(values.get("ID_LIKE", "").split())
    if ids & {"rhel", "fedora", "centos", "rocky", "almalinux", "ol"}:
        return "RedHat"
    if ids & {"debian", "ubuntu"}:
        return "Debian"
    return None


def parse_ofed_info(stdout: str, rc: int | None) -> dict:
    """``ofed_info -s`` -> ``{"stack", "version", "raw", "error"}``.

    ``stack``: ``MLNX_OFED`` / ``DOCA-OFED`` / ``OFED``, ``inbox`` when the tool is absent (``rc`` None, or 127:
    command not found), None when the output cannot be read (``error`` says why; an unreadable stack is never
    taken as a match). ``version``: the first line without its colon (``OFED-internal-24.07-0.6.1``). Samples
    and sources: ``tests/fixtures/tools/ofed_info/README.md``. Never raises.
    """
    raw = (stdout or "").strip()
    if rc is None or (rc == 127 and not raw):
        return {"stack": "inbox", "version": "", "raw": raw, "error": ""}
    first = raw.splitlines()[0].strip() if raw else ""
    match = _OFED.match(first)
    if rc != 0 or not match:
        return {
            "stack": None,
            "version": "",
            "raw": raw,
            "error": f"ofed_info -s: exit {rc}, output {first[:120]!r} is not <stack>-<version>:",
        }
    return {
        "stack": STACK_NAMES[match.group("name")],
        "version": f"{match.group('name')}-{match.group('version')}",
        "raw": raw,
        "error": "",
    }


def choose_flavor(
    family: str, flavor: str, ofed_stack: str | None, kmod_for_running_kernel: bool | None
) -> tuple[str, str]:
    """``(kmod|dkms, reason)`` for ``flavor`` (``auto`` resolved by the rule in the module docstring).

    Raises:
        ValueError: an unknown family or flavour (the message lists the valid ones).
    """
    if family not in FAMILIES:
        raise ValueError(f"os_family {family!r} is not supported; supported: {', '.join(FAMILIES)}")
    if flavor not in FLAVORS:
        raise ValueError(f"flavor {flavor!r} is not one of {', '.join(FLAVORS)}")
    if flavor != "auto":
        return flavor, f"flavor {flavor} requested"
    if kmod_for_running_kernel:
        return "kmod", "a kmod built for the running kernel and RDMA stack is published (kmod_for_running_kernel)"
    if ofed_stack not in ("inbox", None):
        return "dkms", (
            f"{ofed_stack} on the node: the distribution kmod is built against the in-kernel RDMA "
            "stack, DKMS builds ko2iblnd against /usr/src/ofa_kernel"
        )
    if ofed_stack is None:
        return "dkms", "the RDMA stack could not be read: DKMS builds against what is installed"
    if family == "RedHat" and kmod_for_running_kernel is None:
        return "kmod", "EL with the in-kernel RDMA stack: the kABI-tracking kmod covers the EL minor releases"
    if family == "RedHat":
        return "dkms", "no kmod published for the running kernel (kmod_for_running_kernel: false)"
    return "dkms", "Debian/Ubuntu kmod packages exist only for the kernels they were built for"


def client_packages(family: str, flavor: str, kernel: str) -> list[str]:
    """The package names (``list[str]``, install order) for a family, a resolved flavour (``kmod``/``dkms``) and
    the kernel release; the names and their sources are in the module docstring.

    Raises:
        ValueError: a family other than ``RedHat``/``Debian`` (the message lists the supported ones).
    """
    if family == "RedHat":
        return (
            ["lustre-client", "kmod-lustre-client"]
            if flavor == "kmod"
            else ["lustre-client", "lustre-client-dkms", f"kernel-devel-{kernel}"]
        )
    if family == "Debian":
        return (
            ["lustre-client-utils", f"lustre-client-modules-{kernel}"]
            if flavor == "kmod"
            else ["lustre-client-utils", "lustre-client-modules-dkms", f"linux-headers-{kernel}"]
        )
    raise ValueError(f"os_family {family!r} is not supported; supported: {', '.join(FAMILIES)}")


def lustre_packages(family: str, flavor: str, kernel: str) -> list[str]:
    """The Lustre packages among :func:`client_packages` (``lustre-*``, ``kmod-lustre-*``), without the kernel
    headers DKMS needs: the ones whose version is the Lustre version (checked against ``client_version``, pinned on
    install). Raises ValueError for an unknown family, as :func:`client_packages`."""
    return [name for name in client_packages(family, flavor, kernel) if name.startswith(("lustre-", "kmod-lustre-"))]


# --- the client version -------------------------------------------------------------------------------------------

CLIENT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:\.\d+)?$")  # as the intent's storage.client_version (model rules)
_RELEASE = re.compile(r"^(?:\d+:)?(?P<major>\d+)\.(?P<minor>\d+)(?:$|[^\d])")


def check_client_version(value) -> str:
    """``value`` when it is a Lustre version ``MAJOR.MINOR.PATCH[.FIX]`` (``2.15.5``, the form of
    ``lustre-client.json``'s ``client_version``).

    Raises:
        ValueError: anything else, naming the field, the value and the valid form.
    """
    if not isinstance(value, str) or not CLIENT_VERSION.match(value):
        raise ValueError(
            f"client_version: {value!r} is not a Lustre version: expected MAJOR.MINOR.PATCH, for "
            "example 2.15.5 (the patch level is needed to pin the packages)"
        )
    return value


def release_of(version: str) -> str | None:
    """The Lustre release line (``MAJOR.MINOR``) of an installed package version, None when it does not start
    with two numbers.

    Accepts what ``rpm -q --qf '%{VERSION}-%{RELEASE}'`` and dpkg's ``${Version}`` print (samples in
    ``tests/fixtures/tools/{rpm,dpkg-query}``): ``2.15.5-1.el8``, ``2.15.6-1.fsx26.el9``, ``2.14.0-ddn184-1``,
    ``2.14.0``, with an optional Debian epoch ``1:``; builds from git carry ``2.15.5_12_g<hash>`` (lustre.spec
    turns the ``-`` of the version into ``_``). Feature and maintenance releases keep the first two numbers of
    the Lustre version: maintenance releases of a line change the patch level only (the 2.15 LTS line runs
    2.15.0 to 2.15.7, Whamcloud's release list as quoted in the GSI Lustre notes, web-docs.gsi.de/~vpenso), while
    client features arrive with a new line (``mount.client.params`` and ``lctl set_param -C`` with 2.17,
    LU-11077; lustre-release ``lustre/conf/mount.client.params``).
    """
    match = _RELEASE.match(version or "")
    return f"{match['major']}.{match['minor']}" if match else None


def version_mismatches(installed: dict[str, str | None], names: list[str], client_version: str) -> list[str]:
    """The installed packages of ``names`` whose release line differs from ``client_version``'s, each as
    ``"NAME VERSION (MAJOR.MINOR)"`` (``"(release unreadable)"`` when :func:`release_of` cannot read it), in
    ``names`` order. Packages not installed (None) are not compared; a different patch level within the release
    line is accepted."""
    want = release_of(client_version)
    out = []
    for name in names:
        version = installed.get(name)
        if version is None:
            continue
        have = release_of(version)
        if have != want:
            out.append(f"{name} {version} ({have or 'release unreadable'})")
    return out


def install_specs(family: str, names: list[str], client_version: str | None, pinned: list[str]) -> list[str]:
    """The install arguments for ``names``: those in ``pinned`` (the Lustre packages) pinned to ``client_version``,
    the others (kernel headers, extra packages) as they are; all unchanged without ``client_version``.

    Pinning rule: EL ``NAME-VERSION`` (dnf(8) "Specifying packages": ``name-[epoch:]version``; yum(8): ``name-ver``;
    it matches every release of that version, ``2.15.5-1.el9``); Debian/Ubuntu ``NAME=VERSION*`` (apt-get(8):
    ``package=version`` selects a version; a trailing ``*`` makes it a prefix match, Debian/apt
    ``apt-pkg/versionmatch.h``, used for ``=`` by ``apt-pkg/cacheset.cc``), so ``2.15.5*`` takes ``2.15.5-1``
    or ``2.15.5-ddn1``. A repository without that version makes the install fail with the package manager's own
    message (``No match for argument`` / ``Version '2.15.5*' for '...' was not found``).
    """
    if not client_version:
        return list(names)
    sep, suffix = ("-", "") if family == "RedHat" else ("=", "*")
    return [f"{name}{sep}{client_version}{suffix}" if name in pinned else name for name in names]


RPM_QUERY_FORMAT = "%{NAME} %{VERSION}-%{RELEASE}\\n"
DPKG_QUERY_FORMAT = "${Package} ${Version} ${db:Status-Abbrev}\\n"


def query_command(family: str, names: list[str]) -> list[str]:
    """The argv (no shell) that lists the installed versions of ``names``: ``rpm -q --qf`` with
    :data:`RPM_QUERY_FORMAT` on EL, ``dpkg-query -W -f=`` with :data:`DPKG_QUERY_FORMAT` otherwise (real output:
    ``tests/fixtures/tools/{rpm,dpkg-query}``). Never raises."""
    if family == "RedHat":
        return ["rpm", "-q", "--qf", RPM_QUERY_FORMAT.replace("\\n", "\n"), *names]
    return ["dpkg-query", "-W", "-f=" + DPKG_QUERY_FORMAT.replace("\\n", "\n"), *names]


def parse_rpm_query(stdout: str, names: list[str]) -> dict[str, str | None]:
    """``rpm -q --qf '%{NAME} %{VERSION}-%{RELEASE}\\n' NAME...``: ``name -> version`` (None: ``package NAME is
    not installed``, rpm's own line; rpm exits with the number of missing packages)."""
    installed: dict[str, str | None] = dict.fromkeys(names)
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in installed:
            installed[parts[0]] = parts[1]
    return installed


def parse_dpkg_query(stdout: str, names: list[str]) -> dict[str, str | None]:
    """``dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\\n' NAME...``: ``name -> version`` for
    packages whose status is installed (``ii``); removed (``rc``), unknown (``un``) and unmatched names
    (``dpkg-query: no packages found matching NAME`` on stderr) are None."""
    installed: dict[str, str | None] = dict.fromkeys(names)
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] in installed and parts[2].startswith("ii"):
            installed[parts[0]] = parts[1]
    return installed


def install_command(family: str, names: list[str], have_dnf: bool = True) -> list[str]:
    """The argv (no shell) that installs ``names`` (plain names or :func:`install_specs` pins) non-interactively:
    ``dnf``/``yum install -y`` on EL, ``apt-get install -y --no-install-recommends`` otherwise (the caller sets
    ``DEBIAN_FRONTEND=noninteractive``). Never raises."""
    if family == "RedHat":
        return ["dnf" if have_dnf else "yum", "install", "-y", *names]
    return ["apt-get", "install", "-y", "--no-install-recommends", *names]


def parse_modinfo(stdout: str) -> dict[str, list[str]]:
    """kmod ``modinfo`` output -> ``field -> [values]`` (``parm``, ``alias`` repeat; continuation lines of a
    multi-line ``signature`` are joined to the field before them). Layout: ``field:`` padded to 16 columns
    (kmod ``tools/modinfo.c``; samples ``tests/fixtures/tools/modinfo``). Never raises."""
    fields: dict[str, list[str]] = {}
    last = None
    for line in stdout.splitlines():
        match = re.match(r"^([A-Za-z_][\w.]*):\s*(.*)$", line)
        if match and not line[:1].isspace():
            last = match.group(1)
            fields.setdefault(last, []).append(match.group(2).strip())
        elif last and line.strip():
            fields[last][-1] += line.strip()
    return fields


def kernel_of_vermagic(vermagic: str) -> str:
    """The kernel release a module was built for: the first word of ``vermagic`` (``5.15.0-105-generic SMP
    mod_unload modversions``; Linux ``include/linux/vermagic.h`` starts it with ``UTS_RELEASE``); "" when
    empty. Never raises."""
    return vermagic.split()[0] if vermagic.split() else ""


# --- verification -------------------------------------------------------------------------------------------------


def verify_o2ib(
    modinfo_stdout: str,
    modinfo_rc: int | None,
    modinfo_stderr: str,
    ofed: dict,
    kernel: str,
    *,
    real_filename: str = "",
    versions: dict[str, int] | None = None,
    symvers: dict[str, tuple[int, str]] | None = None,
    symvers_path: str = "",
    crc_note: str = "",
    fix_packages: list[str] | None = None,
    strict: bool = False,
) -> dict:
    """Compare ``ko2iblnd`` with the running kernel and RDMA stack (the numbered checks of the module docstring).

    Args:
        modinfo_stdout, modinfo_rc, modinfo_stderr: ``modinfo -k <kernel> ko2iblnd`` (rc None: not run).
        ofed: :func:`parse_ofed_info`'s result. kernel: the running kernel release.
        real_filename: the module file with links resolved ("" when it does not exist here).
        versions: :func:`.lustre_symvers.module_versions` of the module file (None: not read).
        symvers / symvers_path: the running stack's :func:`.lustre_symvers.parse_symvers` and its path (None: not
            found). crc_note: why the CRCs could not be read, for the result. fix_packages: the packages to name in
            the fix.
        strict: on MLNX_OFED/DOCA, a verification without any CRC compared (check 4) is a problem instead of a
            warning (option ``strict_o2ib``): checks 2 and 3 cannot tell one OFED/DOCA release from another.

    Returns:
        ``{"ok": bool, "problems": [str], "warnings": [str], "module": {filename, real_filename, vermagic,
        depends, srcversion, version}, "built_for": {"kernel", "rdma_stack"}, "running": {"kernel",
        "rdma_stack"}, "crc": {"checked": n, "symvers": path, "note": str, "complete": bool}, "msg": str}``
        (``complete``: at least one imported symbol's CRC was compared); ``msg`` names the module, what it was
        built for, what is running and what to do when ``ok`` is False. Never raises.
    """
    running_stack = ofed.get("version") or ("in-kernel RDMA stack" if ofed.get("stack") == "inbox" else "unknown")
    result: dict = {
        "ok": False,
        "problems": [],
        "warnings": [],
        "module": {},
        "built_for": {"kernel": "", "rdma_stack": ""},
        "running": {"kernel": kernel, "rdma_stack": running_stack},
        "crc": {"checked": 0, "symvers": symvers_path, "note": crc_note, "complete": False},
        "msg": "",
    }
    fix = (
        "install the kmod built for this kernel and stack (" + ", ".join(fix_packages) + ")"
        if fix_packages
        else "install the kmod built for this kernel and stack"
    )
    sources = (
        "the ofa_kernel sources (mlnx-ofa_kernel-devel / mlnx-ofed-kernel-dkms)"
        if ofed.get("stack") not in ("inbox", None)
        else "the kernel headers"
    )
    rebuild = f"rebuild it with DKMS against the running stack (dkms autoinstall -k {kernel}, with {sources} installed)"
    fields = parse_modinfo(modinfo_stdout) if modinfo_rc == 0 else {}
    filename = (fields.get("filename") or [""])[0]
    if not filename:
        detail = (modinfo_stderr or modinfo_stdout or "").strip().splitlines()
        result["problems"].append(
            f"ko2iblnd is not installed for kernel {kernel}" + (f" ({detail[0]})" if detail else "")
        )
        result["msg"] = (
            f"ko2iblnd (the o2ib LND) is not installed for the running kernel {kernel} "
            f"(running {running_stack}): {fix}, or {rebuild}"
        )
        return result
    vermagic = (fields.get("vermagic") or [""])[0]
    depends = [d for d in ",".join(fields.get("depends") or []).split(",") if d]
    built_kernel = kernel_of_vermagic(vermagic)
    in_kernel_file = (real_filename or filename).rsplit("/", 1)[-1].startswith("in-kernel-")
    if "mlx_compat" in depends:
        built_stack = "MLNX_OFED/DOCA (depends on mlx_compat)"
    elif in_kernel_file:
        built_stack = "in-kernel RDMA stack (in-kernel-ko2iblnd.ko)"
    else:
        built_stack = "in-kernel RDMA stack (no mlx_compat dependency)"
    result["module"] = {
        "filename": filename,
        "real_filename": real_filename or filename,
        "vermagic": vermagic,
        "depends": depends,
        "srcversion": (fields.get("srcversion") or [""])[0],
        "version": (fields.get("version") or [""])[0],
    }
    result["built_for"] = {"kernel": built_kernel, "rdma_stack": built_stack}
    stack = ofed.get("stack")
    ofed_node = stack not in ("inbox", None)

    if not built_kernel:
        result["problems"].append(f"{filename}: no vermagic in modinfo's output")
    elif built_kernel != kernel:
        weak = "/weak-updates/" in filename
        if weak and not ofed_node:
            result["warnings"].append(
                f"{filename} was built for kernel {built_kernel} and is used on {kernel} "
                "through weak-modules (RHEL kABI)"
            )
        else:
            result["problems"].append(
                f"built for kernel {built_kernel}, running kernel {kernel}"
                + (" (a weak-updates link: kABI does not cover MLNX_OFED/DOCA's ofa_kernel symbols)" if weak else "")
            )
    if stack is None:
        result["problems"].append("the node's RDMA stack is unknown: " + (ofed.get("error") or "ofed_info unread"))
    elif ofed_node and "mlx_compat" not in depends:
        result["problems"].append(
            f"built against the in-kernel RDMA stack (depends: {', '.join(depends) or '-'}), "
            f"the node runs {running_stack}: its ib_core/rdma_cm symbols disagree"
        )
    elif not ofed_node and "mlx_compat" in depends:
        result["problems"].append(
            "built against MLNX_OFED/DOCA (depends on mlx_compat), the node runs the in-kernel "
            "RDMA stack (no ofed_info)"
        )
    if not {"rdma_cm", "ib_core"} & set(depends):
        result["warnings"].append(
            f"{filename}: depends ({', '.join(depends) or '-'}) names neither rdma_cm nor ib_core"
        )
    why = crc_note or "the module file was not read"
    if versions is not None and symvers:
        bad, compared = crc_mismatches(versions, symvers)
        result["crc"]["checked"] = compared
        result["crc"]["complete"] = compared > 0
        if bad:
            result["problems"].append(
                f"{len(bad)} symbol version(s) disagree with {symvers_path}: "
                + "; ".join(bad[:5])
                + (" ..." if len(bad) > 5 else "")
            )
        elif not compared:
            why = f"no symbol ko2iblnd imports is exported in {symvers_path}"
            if not ofed_node:
                result["warnings"].append(why)
    elif versions is not None and symvers is not None:
        why = f"{symvers_path} lists no symbol"
    partial = ""
    if ofed_node and not result["crc"]["complete"]:
        partial = (
            f"partial check: no symbol CRC of ko2iblnd was compared with the running {running_stack} "
            f"({why}); the vermagic and the mlx_compat dependency do not tell one MLNX_OFED/DOCA release "
            "from another, so a ko2iblnd built against another release passes them; install the ofa_kernel "
            "sources that ship Module.symvers (mlnx-ofa_kernel-devel / mlnx-ofed-kernel-dkms) or pass "
            "symvers"
        )
        (result["problems"] if strict else result["warnings"]).append(partial + (" (strict_o2ib)" if strict else ""))
    result["ok"] = not result["problems"]
    if not result["ok"] and result["problems"] == [partial + " (strict_o2ib)"]:
        result["msg"] = (
            f"ko2iblnd ({filename}) could not be verified against {running_stack} and strict_o2ib is "
            f"set: {result['problems'][0]}"
        )
    elif not result["ok"]:
        result["msg"] = (
            f"ko2iblnd ({filename}) was built for kernel {built_kernel or '?'} against the "
            f"{built_stack}; this node runs kernel {kernel} with {running_stack}: "
            + "; ".join(result["problems"])
            + f". Fix: {rebuild}, or {fix}."
        )
    return result
