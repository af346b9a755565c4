"""The ``crewhost`` command: serve, hub, host and admin."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import getpass
import json
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from server.common.data_folder import keep_new_files_private, secure_data_folder
from server.common.errors import CrewhostError
from server.config import Settings, load_settings, settings_markdown
from server.logs import configure_logging


def _folder(value: str) -> Path:
    # Path("") is the current folder, which a command would make private and fill.
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty path names no folder")
    return Path(value)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="TOML settings file (or CREWHOST_CONFIG)")
    parser.add_argument("--data-dir", type=_folder, help="data folder (CREWHOST_DATA_DIR)")
    parser.add_argument("--log-format", choices=["text", "json"], help="log line format")


def _loop(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--loop",
        choices=["auto", "uvloop", "asyncio"],
        help="event loop (CREWHOST_EVENT_LOOP; auto: uvloop when installed)",
    )


def _listen(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bind", help="address to listen on (CREWHOST_HUB_BIND)")
    parser.add_argument("--port", type=int, help="port to listen on (CREWHOST_HUB_PORT)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crewhost", description="A self-hosted team server for AI agents in real browsers."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve", help="run a hub and the built-in host in one process (SQLite by default)"
    )
    _common(serve)
    _listen(serve)
    _loop(serve)
    hub = commands.add_parser(
        "hub", help="run a hub only (several may share one PostgreSQL database)"
    )
    _common(hub)
    _listen(hub)
    _loop(hub)
    host = commands.add_parser("host", help="run a host on this machine, linked to a hub")
    _common(host)
    _loop(host)
    host.add_argument(
        "--hub", required=True, help="address of the hub, e.g. https://crew.example.com"
    )
    host.add_argument("--enrol", help="one-time enrolment code from a team owner (first start)")
    host.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (host.metrics_listen)",
    )

    admin = commands.add_parser("admin", help="administer the database from the shell")
    admin_commands = admin.add_subparsers(dest="admin_command", required=True, metavar="ACTION")
    migrate = admin_commands.add_parser("migrate", help="apply the database migrations")
    _common(migrate)
    owner = admin_commands.add_parser(
        "create-owner", help="create an account that owns a new team (instead of the setup code)"
    )
    _common(owner)
    owner.add_argument("--email", required=True)
    owner.add_argument("--name", required=True)
    owner.add_argument("--team", default="My team", help="name of the new team")
    owner.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    code = admin_commands.add_parser(
        "setup-code", help="print a new one-time setup code (only while no account exists)"
    )
    _common(code)
    rotate = admin_commands.add_parser(
        "rotate-key",
        help="add a new active key to the host's key ring and re-encrypt every secret with it "
        "(stop the host first)",
    )
    _common(rotate)
    retire = admin_commands.add_parser(
        "retire-key",
        help="remove an old key from the host's key ring (refused while a secret still uses it)",
    )
    _common(retire)
    retire.add_argument("key_id", metavar="KEY_ID", help="the key's id, as rotate-key printed it")
    backup = admin_commands.add_parser(
        "backup",
        help="write a consistent backup of the database and data folder, sealed with a "
        "passphrase read from standard input (the server may keep running)",
    )
    _common(backup)
    backup.add_argument("--out", type=Path, required=True, help="the backup file to write")
    restore = admin_commands.add_parser(
        "restore",
        help="restore a backup into an empty data folder, and a PostgreSQL backup's database "
        "into the empty one CREWHOST_DATABASE_URL names (passphrase on standard input)",
    )
    _common(restore)
    restore.add_argument("file", type=Path, metavar="FILE", help="a file made by admin backup")
    restore.add_argument(
        "--sign-out-everyone",
        action="store_true",
        help="in the restored copy, end every session, revoke every open invitation and drop "
        "every host enrolment code (the backup may predate sign-outs and removals)",
    )
    wrap = admin_commands.add_parser(
        "wrap-key-ring",
        help="wrap the host's plain key ring with a master passphrase (asked twice; stop the "
        "host first), then set CREWHOST_MASTER_PASSPHRASE to it",
    )
    _common(wrap)
    wrap.add_argument(
        "--passphrase-stdin",
        action="store_true",
        help="read the passphrase from standard input instead of asking twice",
    )
    doctor = admin_commands.add_parser(
        "doctor",
        help="check Chromium, the stdio MCP sandbox, the database, the data folder's modes, "
        "the key ring, the port "
        "and STUN/TURN, and say what to fix (exit status 1 when something must be)",
    )
    _common(doctor)
    _listen(doctor)
    admin_commands.add_parser("settings", help="print every setting as a Markdown table")
    admin_commands.add_parser(
        "openapi", help="print the hub's OpenAPI document (the web client's types come from it)"
    )
    admin_commands.add_parser(
        "host-protocol",
        help="print the host's team-api and view-channel protocol (the web client's types)",
    )
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {
        "data_dir": getattr(args, "data_dir", None),
        "log.format": getattr(args, "log_format", None),
        "hub.bind": getattr(args, "bind", None),
        "hub.port": getattr(args, "port", None),
        "host.metrics_listen": getattr(args, "metrics", None),
        "event_loop": getattr(args, "loop", None),
    }
    return load_settings(getattr(args, "config", None), overrides=overrides)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "admin" and args.admin_command == "settings":
        print(settings_markdown())
        return 0
    if args.command == "admin" and args.admin_command == "openapi":
        from server.hub.app import openapi_document

        print(json.dumps(openapi_document(), indent=2, sort_keys=True))
        return 0
    if args.command == "admin" and args.admin_command == "host-protocol":
        from server.host.protocol_document import host_protocol_document

        print(json.dumps(host_protocol_document(), indent=2, sort_keys=True))
        return 0
    try:
        settings = _settings(args)
        configure_logging(settings.log.format, settings.log.level)
        if args.command == "admin" and args.admin_command == "doctor":
            return _doctor(settings)
        if {args.command, getattr(args, "admin_command", None)} & _DATABASE_COMMANDS:
            _check_database(settings)
        return _dispatch(args, settings)
    except CrewhostError as exc:
        print(f"crewhost: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except _Terminated:
        return 128 + signal.SIGTERM


# Commands that open the database the settings name.
_DATABASE_COMMANDS = frozenset(
    ("serve", "hub", "migrate", "create-owner", "setup-code", "rotate-key", "retire-key", "backup")
)


def _check_database(settings: Settings) -> None:
    """Refuse a database URL that cannot be used or reached, in one line, before the
    command needs it; the password is never shown."""
    import asyncpg
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    from server.common.errors import InvalidArgument
    from server.db.engine import Database

    try:
        url = make_url(settings.database_url)
        dialect = url.get_dialect()
    except sa.exc.ArgumentError as exc:
        raise InvalidArgument(
            f"CREWHOST_DATABASE_URL is not a database URL Crewhost can use ({exc}): give "
            "postgresql+asyncpg://user@host/db, or leave it empty for SQLite in the data folder"
        ) from None
    shown = url.render_as_string(hide_password=True)
    if url.get_backend_name() not in ("sqlite", "postgresql") or not dialect.is_async:
        raise InvalidArgument(
            f"CREWHOST_DATABASE_URL names {shown}: Crewhost speaks to PostgreSQL through "
            "asyncpg (postgresql+asyncpg://user@host/db), or leave it empty for SQLite"
        )
    if url.get_backend_name() == "sqlite":
        return  # a file in the data folder: the command makes it

    async def reach() -> None:
        db = Database(settings.database_url, pool_size=1)
        try:
            await db.ping()
        finally:
            await db.close()

    try:
        asyncio.run(reach())
    except (OSError, asyncpg.PostgresError, sa.exc.DBAPIError) as exc:
        cause = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
        said = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        raise InvalidArgument(
            f"cannot reach the database {shown}: {said}; check CREWHOST_DATABASE_URL "
            "(database.url), that the database runs and that this user may use it"
        ) from None


class _Terminated(BaseException):
    """SIGTERM during a backup or restore: raised so that what it made is removed."""


def _stop_on_sigterm(_signum: int, _frame: object) -> None:
    raise _Terminated


def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    # Each command imports what it uses only, so a short one starts quickly.
    from server.ops.backup import remove_stale_staging

    if args.command == "admin" and args.admin_command == "restore":
        from server.admin_backup import restore

        # The target is checked before anything touches it; the restore makes it private.
        keep_new_files_private()
        signal.signal(signal.SIGTERM, _stop_on_sigterm)
        print(
            restore(
                settings,
                args.file,
                _passphrase(),
                sign_out_everyone=args.sign_out_everyone,
            )
        )
        return 0
    # Every command from here on serves or writes the data folder: it holds keys and hashes.
    secure_data_folder(settings.data_dir)
    # A backup killed outright (SIGKILL) leaves its staged database snapshot: remove it.
    remove_stale_staging(settings.data_dir)
    if args.command in ("serve", "hub"):
        with _loading_modules():
            from server import event_loop, serve

        event_loop.run(
            serve.run(settings, with_builtin_host=args.command == "serve"), settings.event_loop
        )
        return 0
    if args.command == "host":
        from server import event_loop
        from server.host.enrolment import enrolled

        # Enrolled, or refused with the reason, before the host's modules load.
        enrolment = asyncio.run(enrolled(settings, args.hub, args.enrol))
        with _loading_modules():
            from server.host.start import run_remote_host

        event_loop.run(run_remote_host(settings, args.hub, enrolment), settings.event_loop)
        return 0
    if args.admin_command in ("rotate-key", "retire-key", "wrap-key-ring"):
        return _key_ring_command(args, settings)
    if args.admin_command == "backup":
        from server.admin_backup import backup

        passphrase = _new_backup_passphrase()
        if passphrase is None:
            return 2
        signal.signal(signal.SIGTERM, _stop_on_sigterm)
        made = backup(settings, args.out, passphrase)
        counted = ", ".join(f"{count} {name}" for name, count in made.rows.items() if count)
        print(
            f"backed up the {made.database} database (revision {made.revision or '?'}; "
            f"{counted or 'no rows'}) and {made.files} files to {args.out}"
        )
        if made.vanished:
            print(f"{made.vanished} files were removed while the backup ran: they are not in it")
        return 0
    from server import admin

    if args.admin_command == "migrate":
        copy = asyncio.run(admin.migrate(settings))
        if copy is not None:
            print(f"kept a copy of the database from before the migration: {copy}")
        print("database is up to date")
        return 0
    if args.admin_command == "setup-code":
        code = asyncio.run(admin.setup_code(settings))
        if code is None:
            print("crewhost: accounts exist already; invite people instead", file=sys.stderr)
            return 1
        print(code)
        return 0
    if args.admin_command == "create-owner":
        if args.password_stdin:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass("Password: ")
            if getpass.getpass("Again: ") != password:
                print("crewhost: the passwords differ", file=sys.stderr)
                return 2
        account_id = asyncio.run(
            admin.create_owner(settings, args.email, args.name, password, args.team)
        )
        print(f"created owner {account_id}")
        return 0
    raise AssertionError(args)


@contextlib.contextmanager
def _loading_modules() -> Iterator[None]:
    """No collection while a server's modules load: what they make lives as long as the
    process, and collecting meanwhile only walks it again and again (measured: a fifth of
    the CPU of importing the server, 0.6 to 0.8 s a start)."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _key_ring_command(args: argparse.Namespace, settings: Settings) -> int:
    from server import admin_keys

    if args.admin_command == "rotate-key":
        report = asyncio.run(admin_keys.rotate_key(settings))
        print(f"new active key {report.key_id}: re-encrypted {report.resealed} secrets")
        if report.unreadable:
            print(
                f"crewhost: {report.unreadable} secrets could not be decrypted and keep their "
                "old key: set them again or clear them",
                file=sys.stderr,
            )
            return 1
        return 0
    if args.admin_command == "wrap-key-ring":
        passphrase = _new_passphrase(args.passphrase_stdin)
        if passphrase is None:
            return 2
        admin_keys.wrap_key_ring(settings, passphrase)
        print(
            f"wrapped the key ring {settings.data_dir / 'host' / 'key-ring.json'}: from now on "
            "set CREWHOST_MASTER_PASSPHRASE to this passphrase wherever the host starts"
        )
        return 0
    if args.admin_command == "retire-key":
        asyncio.run(admin_keys.retire_key(settings, args.key_id))
        print(f"retired key {args.key_id}")
        return 0
    raise AssertionError(args)


def _doctor(settings: Settings) -> int:
    """Print each finding; reads only, so the data folder's modes are seen as they are."""
    from server.ops.doctor import diagnose, exit_status

    findings = asyncio.run(diagnose(settings))
    for finding in findings:
        print(finding.render())
    return exit_status(findings)


def _new_passphrase(from_stdin: bool) -> str | None:
    """A new passphrase: the first line of standard input, or asked twice on the terminal."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    passphrase = getpass.getpass("Master passphrase: ")
    if getpass.getpass("Again: ") != passphrase:
        print("crewhost: the passphrases differ", file=sys.stderr)
        return None
    return passphrase


def _passphrase() -> str:
    """The first line of standard input, without a terminal prompt when it is a pipe."""
    if sys.stdin.isatty():
        return getpass.getpass("Backup passphrase: ")
    return sys.stdin.readline().rstrip("\n")


def _new_backup_passphrase() -> str | None:
    """The passphrase that seals a new backup; on a terminal asked twice, None if they differ
    (a typo would seal a backup nobody can open)."""
    passphrase = _passphrase()
    if sys.stdin.isatty() and getpass.getpass("Again: ") != passphrase:
        print("crewhost: the passphrases differ", file=sys.stderr)
        return None
    return passphrase


if __name__ == "__main__":
    sys.exit(main())
