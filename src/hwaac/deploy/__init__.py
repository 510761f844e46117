"""``hwaac deploy``: the collection's playbooks run through the ansible-runner Python API (the runner AWX uses),
with a progress display per ``serial`` batch, the job events kept as artifacts and a summary of ours
(docs/deploy.md)."""
