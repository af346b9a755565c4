"""accounts: every email in the one spelling sign-in looks up (Unicode NFC, lowercased)

An address typed with decomposed accents (e + U+0301) was stored as typed; sign-in and
sign-up now compose it first, so such a row would never be found again. Each is rewritten
to its composed spelling, unless another account already has that spelling (the two
were told apart before): that row stays as it is and is named in the log, for an
operator to merge or rename.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-05 10:00:00.000000
"""

from __future__ import annotations

import logging
import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

log = logging.getLogger(__name__)

_accounts = sa.table("accounts", sa.column("id", sa.String), sa.column("email", sa.String))


def _normal(email: str) -> str:
    # The same spelling as the hub's email validator gives.
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", email.strip()).lower())


def upgrade() -> None:
    bind = op.get_bind()
    rows = [
        (str(r[0]), str(r[1])) for r in bind.execute(sa.select(_accounts.c.id, _accounts.c.email))
    ]
    taken = {email for _, email in rows}
    for account_id, email in rows:
        normal = _normal(email)
        if normal == email:
            continue
        if normal in taken:
            log.warning(
                "account %s keeps its email as stored: another account has its composed"
                " spelling, and it cannot sign in until one of them is renamed",
                account_id,
            )
            continue
        bind.execute(_accounts.update().where(_accounts.c.id == account_id).values(email=normal))
        taken.discard(email)
        taken.add(normal)


def downgrade() -> None:
    pass  # the composed spelling is as good an address as the one it replaced
