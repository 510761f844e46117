"""Paths as Terraform sees them: relative to the stack's output folder, its working directory.

cdktn writes each stack to ``<outdir>/stacks/<stack id>/cdk.tf.json``, and ``terraform`` (or ``cdktn deploy``)
runs there. A file path that the provider reads (``intent_file``) or that Terraform writes (the local state) is
therefore written relative to that folder: the synthesized JSON then holds no machine-specific absolute path and
works wherever the repository is checked out, as long as the output folder stays inside it.
"""

from __future__ import annotations

import os
from pathlib import Path

import cdktn
from constructs import Construct

STACKS_FOLDER = "stacks"
"""cdktn's folder for stacks inside the output folder (``cdktn.Manifest.stacksFolder``)."""


def output_dir(scope: Construct) -> Path:
    """The absolute output folder (``cdktf.out``) of the app that holds ``scope``.

    A relative ``App(outdir=...)`` is resolved against the current directory, as node's ``fs`` calls in the jsii
    child process do (it was started in the same directory and hwaac never changes directory afterwards).
    """
    return Path(os.path.abspath(cdktn.App.of(scope).outdir))


def stack_dir(scope: Construct) -> Path:
    """The absolute output folder of the stack that holds ``scope``: ``<outdir>/stacks/<stack id>``; Terraform's
    working directory for that stack. It may not exist yet (synth creates it)."""
    stack = cdktn.TerraformStack.of(scope)
    return output_dir(scope) / STACKS_FOLDER / stack.node.id


def relative_to(path: str | os.PathLike[str], start: str | os.PathLike[str]) -> str:
    """``path`` written relative to the folder ``start``, with ``/`` separators, e.g.
    ``relative_to("/repo/inventory/demo/fabric.yml", "/repo/cdktf/cdktf.out/stacks/demo")`` ->
    ``"../../../../inventory/demo/fabric.yml"``. Both are made absolute (symlinks resolved) first."""
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def path_from_stack(scope: Construct, path: str | os.PathLike[str]) -> str:
    """``path`` (relative to the current directory, or absolute) as Terraform must see it from the output folder of
    the stack that holds ``scope``: the value to pass as ``intent_file`` to hand-written constructs."""
    return relative_to(path, stack_dir(scope))
