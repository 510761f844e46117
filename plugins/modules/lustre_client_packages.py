#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""aiinfra.hwaac.lustre_client_packages: choose the Lustre client packages (kmod or DKMS) for the distribution and
the node's RDMA stack, install the missing ones, and verify that ko2iblnd was built for the running kernel and
OFED/DOCA before anything mounts (logic in plugins/module_utils/lustre_packages.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: lustre_client_packages
short_description: Install the Lustre client packages and verify the o2ib LND matches the running kernel and OFED/DOCA
version_added: "0.1.0"
description:
  - Chooses the Lustre client packages for the distribution (EL C(lustre-client) with C(kmod-lustre-client) or
    C(lustre-client-dkms); Debian/Ubuntu C(lustre-client-utils) with C(lustre-client-modules-<kernel>) or
    C(lustre-client-modules-dkms); DKMS adds the running kernel's headers), reports which are installed
    (C(rpm -q) / C(dpkg-query -W)) and installs the missing ones with the distribution's package manager.
  - "O(flavor=auto) picks C(kmod) when a kmod built for the running kernel and RDMA stack is known to be published
    (O(kmod_for_running_kernel)); with MLNX_OFED or DOCA-OFED on the node (C(ofed_info -s)) and no such kmod,
    C(dkms) (the distribution kmod is built against the in-kernel RDMA stack); on EL with the in-kernel stack
    C(kmod) (kABI-tracking); on Debian/Ubuntu C(dkms)."
  - "With O(client_version), the installed Lustre packages (not the kernel headers nor O(extra_packages)) must be
    of that release line (C(MAJOR.MINOR): C(2.15.4) passes for C(2.15.5), C(2.16.1) fails): a different line fails
    the task before anything is installed, naming the packages, both versions and what to do; the module never
    replaces an installed Lustre release. Missing Lustre packages are installed pinned to the version: EL
    C(name-VERSION) (dnf(8)/yum(8) package specs), Debian/Ubuntu C(name=VERSION*) (apt-get(8); the trailing C(*)
    is a prefix match, so C(2.15.5*) takes C(2.15.5-1))."
  - "With O(verify), checks C(modinfo -k <kernel> ko2iblnd): installed for the kernel, C(vermagic) built for the
    running kernel (a C(weak-updates) link is a warning on the in-kernel stack), built against the RDMA stack the
    node runs (MLNX_OFED/DOCA-built modules depend on C(mlx_compat)), and, where the module file and the stack's
    C(Module.symvers) can be read, the CRC of every symbol ko2iblnd imports against the exported one. A mismatch
    fails the task naming the module, what it was built for, what is running and what to do. On MLNX_OFED/DOCA a
    verification without any CRC compared is partial: a warning saying why, or a failure with O(strict_o2ib)."
author:
  - hwaac maintainers (@aiinfra)
options:
  flavor:
    description:
      - C(kmod), C(dkms), or C(auto) (see the description).
    type: str
    choices: [kmod, dkms, auto]
    default: auto
  kmod_for_running_kernel:
    description:
      - Whether a kmod package built for the running kernel and the node's RDMA stack is published in the
        configured repositories (for example kmods rebuilt with C(--with mofed) for this DOCA version). Unset
        means unknown.
    type: bool
  client_version:
    description:
      - The Lustre client version of the intent (C(client_version) of the rendered C(lustre-client.json)),
        C(MAJOR.MINOR.PATCH[.FIX]) such as C(2.15.5). Installed Lustre packages of another release line
        (C(MAJOR.MINOR)) fail the task; missing ones are installed pinned to this version (see the description).
      - Unset, versions are neither checked nor pinned.
    type: str
  install:
    description:
      - Install missing packages. With C(false) the module only decides, reports and verifies (molecule and
        image builds that install otherwise).
    type: bool
    default: true
  extra_packages:
    description:
      - More packages to install with the client (vendor meta packages such as C(lustre-client-modules-aws)).
    type: list
    elements: str
    default: []
  verify:
    description:
      - Verify ko2iblnd against the running kernel and RDMA stack.
    type: bool
    default: true
  strict_o2ib:
    description:
      - On a node with MLNX_OFED or DOCA-OFED, fail the verification when no symbol CRC could be compared (no
        C(Module.symvers) of the running stack found, a C(.ko.zst) or otherwise unreadable module file, no imported
        symbol in the symvers file). The other checks (vermagic, the C(mlx_compat) dependency) cannot tell one
        OFED/DOCA release from another, so without the CRCs a ko2iblnd built against another release passes.
      - With C(false) such a verification is reported as partial, with the reason, as a warning.
    type: bool
    default: false
  require_o2ib:
    description:
      - Fail when the verification fails. C(false) for TCP-only clients, which do not load ko2iblnd (the result
        still reports it).
    type: bool
    default: true
  kernel_release:
    description:
      - The kernel to choose packages for and verify against. Default is the running kernel (C(uname -r)).
    type: str
  os_family:
    description:
      - C(RedHat) or C(Debian). Default is read from O(os_release).
    type: str
    choices: [RedHat, Debian]
  os_release:
    description:
      - The os-release file read when O(os_family) is unset.
    type: path
    default: /etc/os-release
  symvers:
    description:
      - The C(Module.symvers) of the running RDMA stack for the CRC check. Default is the first that exists of
        C(/usr/src/ofa_kernel/<arch>/<kernel>/Module.symvers) and C(/usr/src/ofa_kernel/default/Module.symvers)
        (MLNX_OFED/DOCA), or C(/lib/modules/<kernel>/build/Module.symvers) and
        C(/usr/src/kernels/<kernel>/Module.symvers) (in-kernel stack). Without one the CRC check cannot run; on
        MLNX_OFED/DOCA a warning says the verification was partial (a failure with O(strict_o2ib)).
    type: path
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.platform]
attributes:
  check_mode:
    support: full
    details: Reports the install command it would run; verification runs when ko2iblnd is already installed.
  diff_mode:
    support: full
  platform:
    platforms: [linux]
    support: full
notes:
  - The OFED/DOCA release ko2iblnd was built against is not compared with C(ofed_info -s); the module does not
    record it. C(modinfo) shows no such field (ko2iblnd declares only author, description, C(version 2.8.0) and
    license, lustre-release C(lnet/klnds/o2iblnd/o2iblnd.c)); C(srcversion) is a digest of the module's own
    source files only (Linux C(scripts/mod/sumversion.c), "Sum all files in the same dir or subdirs"), the same
    whichever ofa_kernel it was compiled against; C(depends) names modules, not versions; DKMS
    (C(lustre/scripts/dkms.mkconf)) and Whamcloud's C(lustre.spec.in) (C(--with mofed)) record no ofa_kernel
    version either. What ties the module to the stack is the CRC of each imported symbol, which the verification
    compares with the stack's C(Module.symvers).
  - The package repository (Whamcloud, a vendor's, or an internal mirror) must be configured beforehand.
  - After a kernel or OFED/DOCA update a DKMS build must run again for the new kernel; a kmod must be the one built
    for it. This module is the gate before mounting that says which.
requirements:
  - rpm and dnf or yum (EL), dpkg-query and apt-get (Debian/Ubuntu); modinfo (kmod); ofed_info where MLNX_OFED or
    DOCA-OFED is installed.
seealso:
  - module: aiinfra.hwaac.lustre_health
"""

EXAMPLES = r"""
- name: Lustre client packages for this node, verified against its kernel and DOCA
  aiinfra.hwaac.lustre_client_packages:
    flavor: "{{ (lookup('file', hwaac_files + '/lustre-client.json') | from_json).packages.flavor }}"
    client_version: "{{ (lookup('file', hwaac_files + '/lustre-client.json') | from_json).client_version }}"
  become: true

- name: Only check that ko2iblnd matches (images built elsewhere)
  aiinfra.hwaac.lustre_client_packages:
    install: false
  become: true
"""

RETURN = r"""
family:
  description: The distribution family used.
  returned: always
  type: str
  sample: Debian
flavor:
  description: The resolved flavour (kmod or dkms) and, in C(flavor_reason), why.
  returned: always
  type: str
  sample: dkms
flavor_reason:
  description: Why that flavour.
  returned: always
  type: str
packages:
  description: The packages chosen (client packages, then O(extra_packages)).
  returned: always
  type: list
  elements: str
  sample: [lustre-client-utils, lustre-client-modules-dkms, linux-headers-5.15.0-105-generic]
installed:
  description: Package name to installed version (null when not installed), after any install.
  returned: always
  type: dict
missing:
  description: Chosen packages not installed (before any install).
  returned: always
  type: list
  elements: str
commands:
  description: The install command run, or in check mode the one that would run (Lustre packages pinned with
    O(client_version)).
  returned: always
  type: list
  elements: list
ofed:
  description: The node's RDMA stack from C(ofed_info -s) (C(stack) MLNX_OFED, DOCA-OFED or inbox; C(version)).
  returned: always
  type: dict
o2ib:
  description:
    - The verification (C(ok), C(problems), C(warnings), C(module) with filename, vermagic, depends, srcversion,
      C(built_for) and C(running) kernel and RDMA stack, C(crc) with the number of symbols compared, the
      symvers file, why the CRCs could not be read (C(note)) and whether any was compared (C(complete))), or
      C(deferred) when it could not run yet (check mode before the packages are installed).
  returned: when verify
  type: dict
kernel:
  description: The kernel release packages were chosen for and verified against.
  returned: always
  type: str
version_check:
  description:
    - C(client_version), its C(release) (MAJOR.MINOR), the Lustre C(packages) compared and the C(mismatched) ones
      (C(NAME VERSION (MAJOR.MINOR)); empty when all installed ones are of the release line), after any install.
  returned: when client_version is set
  type: dict
  sample:
    client_version: 2.15.5
    release: "2.15"
    packages: [lustre-client, kmod-lustre-client]
    mismatched: []
"""

import os  # noqa: E402
import platform  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_packages import (  # noqa: E402
    check_client_version,
    choose_flavor,
    client_packages,
    install_command,
    install_specs,
    lustre_packages,
    os_family,
    parse_dpkg_query,
    parse_ofed_info,
    parse_rpm_query,
    query_command,
    release_of,
    verify_o2ib,
    version_mismatches,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_symvers import (  # noqa: E402
    module_versions,
    parse_symvers,
    read_module_file,
    symvers_candidates,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_limited  # noqa: E402

NAME = "aiinfra.hwaac.lustre_client_packages"


def run(module, argv, env=None):
    """``(rc, stdout, stderr)``; rc None when the program is not installed."""
    path = module.get_bin_path(argv[0])
    if not path:
        return None, "", f"{argv[0]}: not found on PATH"
    return run_limited(module, [path, *argv[1:]], environ_update=env or {}).rc_out_err


def installed_packages(module, family, names):
    """``{name: version or None}`` for ``names`` from ``rpm -q --qf`` (EL) or ``dpkg-query -W -f`` (Debian), the
    version as ``VERSION-RELEASE`` / dpkg's ``Version`` (formats and samples: ``lustre_packages.query_command``,
    ``tests/fixtures/tools/{rpm,dpkg-query}``). Fails the task (``fail_json``) when the query tool is missing, or
    when dpkg-query exits with anything but 0 or 1 (1: some name matched no package)."""
    argv = query_command(family, names)
    rc, out, err = run(module, argv)
    if rc is None:
        module.fail_json(msg=f"{NAME}: cannot list installed packages: {err}")
    if family == "RedHat":
        return parse_rpm_query(out, names)
    if rc not in (0, 1):  # dpkg-query exits 1 when a name matches no package
        module.fail_json(msg=f"{NAME}: {' '.join(argv[:2])} failed (rc {rc}): {(err or out).strip()[:300]}")
    return parse_dpkg_query(out, names)


def verification(module, kernel, ofed, packages):
    """:func:`verify_o2ib`'s result for ``kernel``: runs ``modinfo -k KERNEL ko2iblnd``, reads the module file it
    names (links resolved; ``.ko``, ``.ko.xz``, ``.ko.gz``) for its ``__versions`` CRCs and the first
    ``Module.symvers`` that exists (O(symvers), else ``symvers_candidates``), and records why the CRCs could not
    be compared (``crc.note``). O(strict_o2ib) makes an MLNX_OFED/DOCA verification without CRCs a problem.
    Never fails the task itself; an unreadable file is a note, not an error."""
    rc, out, err = run(module, ["modinfo", "-k", kernel, "ko2iblnd"])
    filename = ""
    for line in (out or "").splitlines():
        if line.startswith("filename:"):
            filename = line.split(":", 1)[1].strip()
    real = os.path.realpath(filename) if filename and os.path.exists(filename) else ""
    versions, symvers, symvers_path, note = None, None, "", ""
    if real:
        try:
            with open(real, "rb") as fh:
                elf = read_module_file(fh.read(), real)
            versions = module_versions(elf) if elf is not None else None
            if versions is None:
                note = f"{real}: no readable __versions section (compressed with zstd, or no modversions)"
        except OSError as exc:
            note = f"{real}: {exc.strerror or exc}"
    elif filename:
        note = f"{filename}: module file not readable here"
    if versions is not None:
        candidates = (
            [module.params["symvers"]]
            if module.params["symvers"]
            else symvers_candidates(ofed.get("stack"), kernel, platform.machine())
        )
        for path in candidates:
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    symvers = parse_symvers(fh.read())
                symvers_path = path
                break
        if symvers is None:
            note = "no Module.symvers of the running RDMA stack at " + ", ".join(candidates)
    return verify_o2ib(
        out or "",
        rc,
        err or "",
        ofed,
        kernel,
        real_filename=real,
        versions=versions,
        symvers=symvers,
        symvers_path=symvers_path,
        crc_note=note,
        fix_packages=packages,
        strict=module.params["strict_o2ib"],
    )


def version_check(family, installed, names, client_version, have_dnf):
    """``(result, msg)``: the ``version_check`` return value for the Lustre packages ``names`` against
    ``client_version``, and the failure message ("" when every installed one is of its release line). The message
    names the packages and versions, the release wanted, the command that installs the wanted version (EL
    ``dnf``/``yum install NAME-VERSION``, which also downgrades; Debian ``apt-get install --allow-downgrades
    'NAME=VERSION*'``) and the other way out: ``client_version`` set to the installed release."""
    mismatched = version_mismatches(installed, names, client_version)
    release = release_of(client_version)
    result = {"client_version": client_version, "release": release, "packages": names, "mismatched": mismatched}
    if not mismatched:
        return result, ""
    specs = install_specs(family, names, client_version, names)
    fix = (
        ("dnf" if have_dnf else "yum") + " install " + " ".join(specs)
        if family == "RedHat"
        else "apt-get install --allow-downgrades " + " ".join(f"'{spec}'" for spec in specs)
    )
    first = next(installed[name] for name in names if installed.get(name) and release_of(installed[name]) != release)
    have = first.split(":", 1)[-1].split("-", 1)[0]
    msg = (
        f"{NAME}: installed Lustre client packages are of another release than client_version: "
        f"{', '.join(mismatched)}; client_version is {client_version} (release {release}). This module does not "
        "replace an installed Lustre release (the kernel modules of a mounted client must match its tools): "
        f"unmount the Lustre file systems, then {fix}; or set client_version to {have} in the intent if that "
        "release is the one wanted."
    )
    return result, msg


def main():
    """Choose, check, install and verify (see DOCUMENTATION); exits with the RETURN values or fails naming what is
    wrong and what to do."""
    module = AnsibleModule(
        argument_spec={
            "flavor": {"type": "str", "choices": ["kmod", "dkms", "auto"], "default": "auto"},
            "kmod_for_running_kernel": {"type": "bool"},
            "client_version": {"type": "str"},
            "install": {"type": "bool", "default": True},
            "extra_packages": {"type": "list", "elements": "str", "default": []},
            "verify": {"type": "bool", "default": True},
            "require_o2ib": {"type": "bool", "default": True},
            "strict_o2ib": {"type": "bool", "default": False},
            "kernel_release": {"type": "str"},
            "os_family": {"type": "str", "choices": ["RedHat", "Debian"]},
            "os_release": {"type": "path", "default": "/etc/os-release"},
            "symvers": {"type": "path"},
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["client_version"] is not None:
        try:
            check_client_version(p["client_version"])
        except ValueError as exc:
            module.fail_json(msg=f"{NAME}: {exc}")
    family = p["os_family"]
    if family is None:
        try:
            with open(p["os_release"], encoding="utf-8") as fh:
                family = os_family(fh.read())
        except OSError as exc:
            module.fail_json(msg=f"{NAME}: os_release {p['os_release']}: {exc.strerror or exc}; set os_family")
        if family is None:
            module.fail_json(
                msg=f"{NAME}: {p['os_release']} names neither an EL nor a Debian/Ubuntu "
                "distribution; set os_family (RedHat or Debian)"
            )
    kernel = p["kernel_release"] or platform.release()
    rc, out, _err = run(module, ["ofed_info", "-s"])
    ofed = parse_ofed_info(out, rc)
    try:
        flavor, reason = choose_flavor(family, p["flavor"], ofed["stack"], p["kmod_for_running_kernel"])
    except ValueError as exc:
        module.fail_json(msg=f"{NAME}: {exc}")
    packages = client_packages(family, flavor, kernel)
    packages += [name for name in p["extra_packages"] if name not in packages]
    lustre = lustre_packages(family, flavor, kernel)
    have_dnf = bool(module.get_bin_path("dnf"))
    before = installed_packages(module, family, packages)
    missing = [name for name, version in before.items() if version is None]
    result = {
        "changed": False,
        "family": family,
        "flavor": flavor,
        "flavor_reason": reason,
        "packages": packages,
        "installed": before,
        "missing": missing,
        "commands": [],
        "ofed": ofed,
        "kernel": kernel,
    }
    if p["client_version"]:
        result["version_check"], msg = version_check(family, before, lustre, p["client_version"], have_dnf)
        if msg:
            module.fail_json(msg=msg, **result)
    if p["install"] and missing:
        argv = install_command(family, install_specs(family, missing, p["client_version"], lustre), have_dnf=have_dnf)
        result["commands"].append(argv)
        result["changed"] = True
        result["diff"] = {
            "before": {"installed": sorted(n for n, v in before.items() if v)},
            "after": {"installed": sorted(packages)},
        }
        if not module.check_mode:
            env = {"DEBIAN_FRONTEND": "noninteractive"} if family == "Debian" else {}
            rc, out, err = run(module, argv, env)
            if rc != 0:
                module.fail_json(
                    msg=f"{NAME}: {' '.join(argv)} failed (rc {rc}): {(err or out).strip()[-600:]}", **result
                )
            result["installed"] = installed_packages(module, family, packages)
            still = [name for name, version in result["installed"].items() if version is None]
            if still:
                module.fail_json(msg=f"{NAME}: {', '.join(still)} still not installed after {' '.join(argv)}", **result)
            if p["client_version"]:
                result["version_check"], msg = version_check(
                    family, result["installed"], lustre, p["client_version"], have_dnf
                )
                if msg:
                    module.fail_json(msg=f"{msg} (after {' '.join(argv)})", **result)
    if p["verify"]:
        check = verification(module, kernel, ofed, packages)
        pending = module.check_mode and p["install"] and missing
        if pending and not check["module"]:
            result["o2ib"] = {
                "ok": None,
                "deferred": f"check mode: {', '.join(missing)} not installed yet, "
                "ko2iblnd is verified after the install",
            }
        else:
            result["o2ib"] = check
            for warning in check["warnings"]:
                module.warn(f"ko2iblnd: {warning}")
            if not check["ok"] and p["require_o2ib"]:
                module.fail_json(msg=f"{NAME}: {check['msg']}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
