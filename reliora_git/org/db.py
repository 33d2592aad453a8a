"""The organisation database: connecting, and the schema the tool creates and migrates.

Only this package imports psycopg (the optional extra ``org``), and only when an
``org`` command runs. Every statement takes record text as parameters, never as
SQL (SPEC.md §13): a title such as ``'); DROP TABLE records; --`` is data.

The schema version is the number of :data:`MIGRATIONS` applied (each a list
of statements, kept in ``reliora_schema``). ``org sync`` applies the missing ones in one
transaction, under an advisory lock so that two syncs starting together do not
both create the tables; ``org search`` and ``org status`` only read, and say
what to run when the schema is missing or newer than this tool.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from reliora_git.records.errors import RelioraError

if TYPE_CHECKING:
    import psycopg

#: Environment variable naming the database when ``--db`` is not given.
DB_ENV = "RELIORA_DB_URL"
#: First key of every advisory lock the tool takes (the second is per repository).
LOCK_SPACE = 0x52454C49  # "RELI"

#: Statements of each schema version, in order. Never edit a released one: add a version.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE reliora_schema (version integer NOT NULL)""",
        """INSERT INTO reliora_schema VALUES (0)""",
    ),
    (
        # One row per synced repository.
        """CREATE TABLE repos (
            repo_id serial PRIMARY KEY,
            name text COLLATE "C" NOT NULL UNIQUE,
            source text NOT NULL,
            ref text NOT NULL,
            commit text NOT NULL,
            synced_at timestamptz NOT NULL DEFAULT now(),
            parser text NOT NULL,
            records integer NOT NULL DEFAULT 0,
            events integer NOT NULL DEFAULT 0,
            skipped jsonb NOT NULL DEFAULT '[]'
        )""",
        # Every record file at the synced commit, usable or not. The value columns are
        # what the file parses to by itself (values.indexed_value); the derived ones
        # depend on the repository's other files and are recomputed by each sync.
        """CREATE TABLE records (
            repo_id integer NOT NULL REFERENCES repos ON DELETE CASCADE,
            rec bigserial NOT NULL,
            -- the repository's name again: ranking orders ties by it, without a join
            repo_name text COLLATE "C" NOT NULL,
            locator text COLLATE "C" NOT NULL,
            blob text NOT NULL,
            id text COLLATE "C",
            error text,
            error_line integer,
            title text,
            tags text[],
            status text,
            confidence text,
            text text,
            fingerprint text,
            supersedes text[],
            visible boolean NOT NULL DEFAULT false,
            shown_status text,
            active boolean NOT NULL DEFAULT false,
            superseded_by text[] NOT NULL DEFAULT '{}',
            feedback_counts integer[] NOT NULL DEFAULT '{0,0,0,0,0}',
            feedback double precision NOT NULL DEFAULT 0,
            PRIMARY KEY (repo_id, rec),
            UNIQUE (repo_id, locator)
        )""",
        # What ranking reads of every candidate, answered from the index alone.
        """CREATE INDEX records_rank ON records (repo_id, rec)
            INCLUDE (visible, active, feedback, id, repo_name)""",
        """CREATE TABLE events (
            repo_id integer NOT NULL REFERENCES repos ON DELETE CASCADE,
            locator text COLLATE "C" NOT NULL,
            blob text NOT NULL,
            record_id text COLLATE "C",
            outcome text,
            error text,
            PRIMARY KEY (repo_id, locator)
        )""",
        # The vocabulary: every token of every record (stop words too: the prefix rule
        # and the exact phrase need them). Terms are never deleted; postings decide.
        """CREATE TABLE terms (
            term_id serial PRIMARY KEY,
            term text COLLATE "C" NOT NULL UNIQUE
        )""",
        # term → the records holding it, with one bit per scoring component (rank.FIELDS).
        """CREATE TABLE postings (
            term_id integer NOT NULL,
            repo_id integer NOT NULL,
            rec bigint NOT NULL,
            mask smallint NOT NULL,
            PRIMARY KEY (term_id, repo_id, rec) INCLUDE (mask)
        )""",
        """CREATE INDEX postings_record ON postings (repo_id, rec)""",
    ),
    (
        # A record's summary for search results (records/summary.py), made when parsed.
        """ALTER TABLE records ADD COLUMN summary text""",
    ),
    (
        # The repository itself (its git common dir, resolved), whatever name it is synced
        # under: a sync says when another name already holds the same repository.
        """ALTER TABLE repos ADD COLUMN identity text""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def database_url(given: str | None) -> str:
    url = given or os.environ.get(DB_ENV) or ""
    if not url.strip():
        raise RelioraError(f"no database named: pass --db URL or set {DB_ENV}", code="no_database")
    return url


def connect(url: str) -> psycopg.Connection[Any]:
    """A connection to the organisation database; one clear line when there is none."""
    try:
        import psycopg
    except ImportError:
        from reliora_git.extras import install_command

        raise RelioraError(
            # Not a package index name: reliora-git is installed from a clone or a wheel.
            "the org commands need psycopg 3, the org extra: install reliora again from "
            f"your clone of reliora-git with it ({install_command('org')})",
            code="missing_dependency",
        ) from None
    try:
        conn = psycopg.connect(url, connect_timeout=10)
    except psycopg.ProgrammingError as error:  # a malformed URL
        raise RelioraError(f"invalid database URL: {_one_line(error)}", code="bad_url") from None
    except psycopg.Error as error:
        raise database_error(error) from None
    encoding = conn.info.parameter_status("server_encoding")
    if encoding != "UTF8":
        conn.close()
        raise RelioraError(
            f"the database uses encoding {encoding}; records need UTF8 "
            "(CREATE DATABASE … ENCODING 'UTF8')",
            code="bad_database",
        )
    return conn


@contextlib.contextmanager
def opened(given: str | None) -> Iterator[psycopg.Connection[Any]]:
    """A connection to the database ``--db`` (or RELIORA_DB_URL) names, closed afterwards.

    Any database failure while it is used becomes one line (:func:`database_error`).
    """
    conn = connect(database_url(given))
    import psycopg  # connect() has said what to install when it is missing

    try:
        yield conn
    except psycopg.Error as error:
        raise database_error(error) from None
    finally:
        conn.close()


def database_error(error: Exception) -> RelioraError:
    """A database failure as one line (psycopg's messages span several)."""
    return RelioraError(f"database error: {_one_line(error)}", code="database_error")


def _one_line(error: Exception) -> str:
    text = re.sub(r"\s+", " ", str(error)).strip()
    return text or type(error).__name__


def schema_version(conn: psycopg.Connection[Any]) -> int | None:
    """The schema version of the database, or None when the tool has not created it."""
    found = conn.execute("SELECT to_regclass('reliora_schema') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return None
    row = conn.execute("SELECT version FROM reliora_schema").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Bring the schema to :data:`SCHEMA_VERSION` in one transaction; the version it had."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_SPACE,))
        before = schema_version(conn) or 0
        _refuse_newer(before)
        for version in range(before, SCHEMA_VERSION):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)  # constant text: no record data in here
            conn.execute("UPDATE reliora_schema SET version = %s", (version + 1,))
    return before


def require_schema(conn: psycopg.Connection[Any]) -> None:
    """Refuse to read a database that the tool has not set up, or a newer one."""
    current = schema_version(conn)
    if current is None:
        raise RelioraError(
            "the database holds no repositories yet: run `reliora org sync REPO` first",
            code="no_schema",
        )
    _refuse_newer(current)
    if current < SCHEMA_VERSION:
        raise RelioraError(
            f"the database schema is version {current}, this tool needs {SCHEMA_VERSION}: "
            "run `reliora org sync` once to migrate it",
            code="old_schema",
        )


def _refuse_newer(current: int) -> None:
    if current > SCHEMA_VERSION:
        raise RelioraError(
            f"the database schema is version {current}, newer than this tool's "
            f"{SCHEMA_VERSION}: upgrade reliora-git",
            code="newer_schema",
        )


def repositories(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """``org status``: each synced repository, its commit and counts, by name."""
    require_schema(conn)
    rows = conn.execute(
        "SELECT name, source, ref, commit, synced_at, records, events, skipped "
        "FROM repos WHERE commit <> '' ORDER BY name"
    ).fetchall()
    conn.rollback()
    return [
        {
            "repo": name,
            "source": source,
            "ref": ref,
            "commit": commit,
            "syncedAt": synced_at.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "records": records,
            "feedbackEvents": events,
            "skipped": len(skipped),
        }
        for name, source, ref, commit, synced_at, records, events, skipped in rows
    ]
