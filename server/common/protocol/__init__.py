"""The one codec for messages between hub, host and peers: one typed model per message.

``codec`` (version, errors, encoding), ``link`` (hub <-> host), ``signaling``
(peer -> hub), ``team_api`` and its ``events`` (peer <-> host), ``view`` (the
live view of a tab). The host-protocol document and the web client's types are
generated from these models.
"""
