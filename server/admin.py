"""Shell administration: the work behind ``crewhost admin …``, through the same services."""

from __future__ import annotations

from pydantic import ValidationError

from server.common.wire import invalid_argument_from
from server.config import Settings
from server.db.engine import Database
from server.host.services.keys import RotationReport, SecretKeys, key_ring_file
from server.hub.container import Hub
from server.hub.schemas import SignUp


async def migrate(settings: Settings) -> None:
    hub = Hub.build(settings)
    try:
        await hub.db.migrate()
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


async def rotate_key(settings: Settings) -> RotationReport:
    """A new active key for the host's secret box, every ciphertext re-sealed with it."""
    db = Database(settings.database_url, pool_size=settings.database.pool_size)
    try:
        await db.migrate()
        return await SecretKeys(db, key_ring_file(settings)).rotate()
    finally:
        await db.close()


async def retire_key(settings: Settings, key_id: str) -> None:
    """Remove an old key from the host's key ring once no ciphertext uses it."""
    db = Database(settings.database_url, pool_size=settings.database.pool_size)
    try:
        await db.migrate()
        await SecretKeys(db, key_ring_file(settings)).retire(key_id)
    finally:
        await db.close()
