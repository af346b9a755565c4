"""Shell administration: the work behind ``crewhost admin …``, through the same services.

Each command's work lives in a module of its own, so that a command imports only what it
uses: the accounts and setup code here (through the hub), the key ring in
``server.admin_keys``, backups in ``server.admin_backup``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from server.common.wire import invalid_argument_from
from server.config import Settings
from server.hub.container import Hub
from server.hub.schemas import SignUp


async def migrate(settings: Settings) -> Path | None:
    """Bring the database to the newest revision; answers the copy kept from before, if any."""
    hub = Hub.build(settings)
    try:
        return await hub.db.migrate()
    finally:
        await hub.db.close()


async def setup_code(settings: Settings) -> str | None:
    hub = Hub.build(settings)
    try:
        await hub.db.migrate()
        return await hub.setup.issue_code()
    finally:
        await hub.db.close()


async def create_owner(settings: Settings, email: str, name: str, password: str, team: str) -> str:
    """Create the owner of a new team, checking the fields as a sign-up would."""
    try:
        checked = SignUp.model_validate(
            {"email": email, "name": name, "password": password, "team_name": team}
        )
    except ValidationError as exc:
        raise invalid_argument_from(exc) from exc
    hub = Hub.build(settings)
    try:
        await hub.db.migrate()
        account = await hub.accounts.create_owner(
            checked.email, checked.name, checked.password, checked.team_name
        )
    finally:
        await hub.db.close()
    return account.id
