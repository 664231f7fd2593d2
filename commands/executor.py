"""Run a parsed command against the rewind service and the core; answer with a neutral result.

Every rule (ownership, refusals, what a restore takes back) is the service's: this module
only chooses which call a command makes, asks before a change, and words the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from commands import registry, render
from commands.i18n import error_text, t
from commands.parser import (
    Command,
    Fork,
    Help,
    MemoryOff,
    ReplayClear,
    ReplayCompare,
    ReplayList,
    ReplayRestore,
    ReplayShow,
    ReplayUndo,
    Reset,
    Stop,
    Usage,
)
from kazma_core.core import Core
from kazma_core.errors import KazmaError
from kazma_core.stores.types import User
from kazma_ui.thread_rewind import GroupGrant, RewindService


@dataclass(frozen=True)
class CommandContext:
    service: RewindService
    core: Core
    user: User
    surface: str  # web, tui, telegram, discord, slack
    chat_id: str
    lang: str  # en or ar
    base_url: str  # where the web app is served, for links
    confirmed: bool = False  # the person already said yes to this change
    grant: GroupGrant | None = None  # in a group chat: what the platform vouches this person may do


@dataclass(frozen=True)
class CommandResult:
    """What a surface shows: plain text in the person's language, plus data to render richer."""

    kind: Literal["answer", "confirm", "error"]
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    code: str | None = None
    ephemeral: bool = False  # only the person who asked needs to see it


async def execute(cmd: Command | Usage, ctx: CommandContext) -> CommandResult:
    try:
        return await _run(cmd, ctx)
    except KazmaError as err:
        return error_result(err, ctx.lang)


def error_result(err: KazmaError, lang: str) -> CommandResult:
    return CommandResult("error", error_text(err, lang), {"error": err.code, **err.details}, err.code, ephemeral=True)


def _base(ctx: CommandContext) -> str:
    return ctx.base_url.rstrip("/")


def page_link(ctx: CommandContext) -> str:
    return f"{_base(ctx)}/replay?thread={quote(ctx.chat_id, safe='')}"


def chat_link(ctx: CommandContext, chat_id: str) -> str:
    return f"{_base(ctx)}/?thread={quote(chat_id, safe='')}"


def _opens_page(cmd: Command | Usage, surface: str) -> bool:
    """In the web chat, time travel (but clearing) happens on the page: the command links to it."""
    found = registry.find(cmd.command if isinstance(cmd, Usage) else cmd.path)
    return surface == "web" and found is not None and found.cmd.web is not None


async def _run(cmd: Command | Usage, ctx: CommandContext) -> CommandResult:
    if _opens_page(cmd, ctx.surface):
        return await _page(ctx)
    if isinstance(cmd, Usage):
        raise cmd.error(ctx.surface)
    if isinstance(cmd, ReplayList):
        return await _list(ctx)
    if isinstance(cmd, ReplayRestore):
        return await _restore(cmd, ctx)
    if isinstance(cmd, ReplayUndo):
        done = await ctx.service.undo(ctx.user, ctx.surface, ctx.chat_id, ctx.grant)
        return CommandResult("answer", render.undone(done, ctx.lang), done)
    if isinstance(cmd, ReplayShow):
        step = await ctx.service.get_step(ctx.user, ctx.surface, ctx.chat_id, cmd.step, ctx.grant)
        return CommandResult("answer", render.step_view(step, ctx.lang), {"step": step}, ephemeral=True)
    if isinstance(cmd, ReplayCompare):
        other, b = cmd.other()
        diff = await ctx.service.compare(ctx.user, ctx.surface, ctx.chat_id, cmd.a, b, ctx.grant, b_chat_id=other)
        return CommandResult("answer", render.comparison(diff, ctx.lang), {"comparison": diff}, ephemeral=True)
    if isinstance(cmd, ReplayClear):
        return await _clear(ctx)
    if isinstance(cmd, Fork):
        return await _fork(cmd, ctx)
    if isinstance(cmd, Stop):
        await ctx.core.chats.owned(ctx.user, ctx.chat_id)
        stopped = await ctx.core.turns.stop(ctx.chat_id)
        return CommandResult("answer", t("stopped" if stopped else "nothing_running", ctx.lang), {"thread_id": ctx.chat_id, "stopped": stopped})
    if isinstance(cmd, Reset):
        await ctx.core.chats.owned(ctx.user, ctx.chat_id)
        await ctx.core.turns.settle_expired(ctx.chat_id)  # an expired card must not block a reset
        await ctx.core.chats.reset(ctx.user, ctx.chat_id)
        return CommandResult("answer", t("reset_done", ctx.lang), {"thread_id": ctx.chat_id})
    if isinstance(cmd, MemoryOff):
        await ctx.core.chats.owned(ctx.user, ctx.chat_id)
        if not ctx.confirmed:
            # It forgets and deletes every saved step, and cannot be undone: ask, as /replay clear does.
            return CommandResult("confirm", t("confirm_memory_off", ctx.lang), {"confirm": cmd.text()}, ephemeral=True)
        await ctx.core.chats.memory_off(ctx.user, ctx.chat_id)
        return CommandResult("answer", t("memory_off_done", ctx.lang), {"thread_id": ctx.chat_id, "memory": False})
    if isinstance(cmd, Help):
        commands = [
            {"usage": x.typed(surface=ctx.surface), "description": x.description(ctx.lang, ctx.surface)}
            for x in registry.leaves(ctx.surface)
        ]
        return CommandResult("answer", registry.help_text(ctx.lang, ctx.surface), {"commands": commands}, ephemeral=True)
    raise TypeError(f"not a command: {cmd!r}")


async def _page(ctx: CommandContext) -> CommandResult:
    listing = await ctx.service.list_steps(ctx.user, ctx.surface, ctx.chat_id, ctx.grant)
    count, link = len(listing["snapshots"]), page_link(ctx)
    text = t("page_steps", ctx.lang, count=count, link=link) if count else t("page_none", ctx.lang, link=link)
    return CommandResult("answer", text, {"thread_id": ctx.chat_id, "steps": count, "link": link}, ephemeral=True)


async def _list(ctx: CommandContext) -> CommandResult:
    listing = await ctx.service.list_steps(ctx.user, ctx.surface, ctx.chat_id, ctx.grant)
    link = page_link(ctx)
    if not listing["snapshots"]:
        return CommandResult("answer", t("no_steps", ctx.lang), {"thread_id": ctx.chat_id, "turns": [], "link": link}, ephemeral=True)
    text, turns = render.step_list(listing, ctx.lang, link)
    data = {"thread_id": ctx.chat_id, "turns": turns, "count": len(listing["snapshots"]), "link": link}
    return CommandResult("answer", text, data, ephemeral=True)


async def _restore(cmd: ReplayRestore, ctx: CommandContext) -> CommandResult:
    svc, lang = ctx.service, ctx.lang
    if not ctx.confirmed:
        preview = await svc.preview_restore(ctx.user, ctx.surface, ctx.chat_id, cmd.step, ctx.grant)
        if not preview["restorable"]:
            # The service refuses this step before changing anything, and audits the refusal:
            # asking "are you sure?" first would be a question without a choice.
            await svc.restore(ctx.user, ctx.surface, ctx.chat_id, preview["snapshot"]["snapshot_id"], ctx.grant)
        confirm = ReplayRestore(preview["snapshot"]["snapshot_id"]).text()
        return CommandResult("confirm", render.restore_question(preview, lang), {"confirm": confirm, "preview": preview}, ephemeral=True)
    done = await svc.restore(ctx.user, ctx.surface, ctx.chat_id, cmd.step, ctx.grant)
    return CommandResult("answer", render.restored(done, lang), done)


async def _fork(cmd: Fork, ctx: CommandContext) -> CommandResult:
    svc, lang = ctx.service, ctx.lang
    if not ctx.confirmed:
        snap = (await svc.get_step(ctx.user, ctx.surface, ctx.chat_id, cmd.step, ctx.grant))["snapshot"]
        if snap["truncated"]:
            # As for a restore: the service's refusal, audited, rather than a pointless question.
            await svc.fork(ctx.user, ctx.surface, ctx.chat_id, snap["snapshot_id"], ctx.grant)
        text = t("confirm_fork", lang, label=render.label(snap, lang), short_id=render.short_id(snap["snapshot_id"]))
        confirm = Fork(snap["snapshot_id"], cmd.here).text()
        return CommandResult("confirm", text, {"confirm": confirm, "snapshot": snap}, ephemeral=True)
    done = await svc.fork(ctx.user, ctx.surface, ctx.chat_id, cmd.step, ctx.grant)
    link = chat_link(ctx, done["thread_id"])
    origin = done["forked_from"] or {}
    where = render.label(origin, lang) if "turn_index" in origin else render.short_id(cmd.step)
    text = t("forked", lang, label=where, title=done["title"], link=link)
    # `label` and `here` let a chat app open the fork in a thread of its own (bots/gateway.py).
    return CommandResult("answer", text, {**done, "link": link, "label": where, "here": bool(cmd.here)})


async def _clear(ctx: CommandContext) -> CommandResult:
    if not ctx.confirmed:
        count = len((await ctx.service.list_steps(ctx.user, ctx.surface, ctx.chat_id, ctx.grant))["snapshots"])
        if not count:
            return CommandResult("answer", t("no_steps", ctx.lang), {"thread_id": ctx.chat_id, "steps": 0}, ephemeral=True)
        text = t("confirm_clear", ctx.lang, count=count)
        return CommandResult("confirm", text, {"confirm": ReplayClear().text(), "steps": count}, ephemeral=True)
    done = await ctx.service.clear(ctx.user, ctx.surface, ctx.chat_id, ctx.grant)
    return CommandResult("answer", t("cleared", ctx.lang, deleted=done["deleted"]), done)
