"""The development NetBox: a real NetBox on this machine for the demo and the tests (:mod:`hwaac.devnetbox.local`).

Its own PostgreSQL, Redis and gunicorn on loopback; nothing here imports the sync (:mod:`hwaac.netbox`).
"""
