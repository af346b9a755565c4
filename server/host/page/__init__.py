"""The JavaScript the host runs in pages: one file per script under ``js/``, and its loader."""
