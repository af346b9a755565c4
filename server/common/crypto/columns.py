"""Where ciphertexts live: one ``EncryptedColumn`` per column that holds secret-box output.

``server.db.tables.ENCRYPTED_COLUMNS`` lists them all; the host's start-up check and
key rotation walk that list, and whoever seals a secret takes its binding from the
same entry, so they always agree on the associated data.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from server.common.crypto.box import SecretBinding


@dataclass(frozen=True, slots=True)
class EncryptedColumn:
    """A column of ciphertexts, with the columns that name each row and its team."""

    table: sa.Table
    id_column: str
    team_column: str
    column: str
    purpose: str

    def binding(self, team_id: str, row_id: str) -> SecretBinding:
        """The binding of the secret in row ``row_id`` of team ``team_id``."""
        return SecretBinding(
            team_id=team_id,
            table=self.table.name,
            row_id=row_id,
            column=self.column,
            purpose=self.purpose,
        )

    @property
    def name(self) -> str:
        return f"{self.table.name}.{self.column}"
