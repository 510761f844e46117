"""hwaac.verify: the post-deploy check catalog (cabling = plan, BGP, routes/ECMP, rails, MTU), in the way of
ANTA: typed inputs from the plan, one class per check, results PASS/FAIL/SKIP/ERROR (docs/verify.md).

    from hwaac.verify import load_inputs, verify, verify_devices, LabCollector
    inputs = load_inputs("build/demo")
    report, outputs = verify(inputs, LabCollector(Lab.load("demo")))
    results = verify_devices(inputs, collector, ["leaf-p0-su01-r0"])   # a rollout batch's gate
"""

from hwaac.verify.checks import BY_NAME, CATALOG
from hwaac.verify.inputs import InputError, Inputs, load_inputs
from hwaac.verify.lab import LabCollector
from hwaac.verify.raw import Collector, Command, Raw, read_facts_folder, write_facts_folder
from hwaac.verify.results import Result, Status
from hwaac.verify.runner import Report, judge, requests, select, verify, verify_devices

__all__ = [
    "BY_NAME",
    "CATALOG",
    "Collector",
    "Command",
    "InputError",
    "Inputs",
    "LabCollector",
    "Raw",
    "Report",
    "Result",
    "Status",
    "judge",
    "load_inputs",
    "read_facts_folder",
    "requests",
    "select",
    "verify",
    "verify_devices",
    "write_facts_folder",
]
