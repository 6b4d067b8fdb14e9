"""Inputs from the internet (rules/download.smk).

- :mod:`.fetch`: checksum-pinned files (``manifest.yaml``), local mirrors first, then their URLs.
- :mod:`.fineweb`: the first documents of a FineWeb stream (or a local corpus) as parquet shards.
- :mod:`.pipeline`: config → the rules' params and file lists.
"""
