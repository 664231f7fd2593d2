"""Kazma's checkpointer passes LangGraph's own conformance suite for checkpoint savers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from langgraph.checkpoint.conformance import checkpointer_test, validate

from kazma_core.stores.app_schema import MIGRATIONS
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.postgres import PostgresDB
from kazma_core.stores.sqlite import SqliteDB


async def test_kazma_checkpointer_passes_langgraph_conformance(tmp_path: Path) -> None:
    made = iter(range(1000))

    @checkpointer_test(name="KazmaSqlite")
    async def kazma_saver() -> AsyncIterator[SqlConversationStore]:
        db = SqliteDB(tmp_path / f"kazma-{next(made)}.db", MIGRATIONS, secure_delete=True)
        yield SqlConversationStore(db)
        await db.close()

    report = await validate(kazma_saver)
    report.print_report()
    assert report.passed_all_base()
    assert report.passed_all()  # the optional ones too: copy_thread, prune, delete_for_runs


async def test_kazma_checkpointer_passes_langgraph_conformance_on_postgresql(pg_url: str) -> None:
    made = iter(range(1000))

    @checkpointer_test(name="KazmaPostgres")
    async def kazma_saver() -> AsyncIterator[SqlConversationStore]:
        db = PostgresDB(pg_url, f"conformance_{next(made)}", MIGRATIONS)  # a fresh schema each time
        yield SqlConversationStore(db)
        await db.close()

    report = await validate(kazma_saver)
    report.print_report()
    assert report.passed_all_base()
    assert report.passed_all()
