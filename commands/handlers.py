"""What each command does, once for every surface: the registry names these as its handlers.

A command that changes something has two: `ask_*`, the question before the change (or the
refusal, when the change cannot happen), and the change itself, run once the person said
yes. Every rule (ownership, refusals, what a restore takes back) is the rewind service's:
a handler only chooses which call a command makes and words its outcome.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING
from urllib.parse import quote

from commands import render
from commands.answers import (
    ClearQuestion,
    CommandResult,
    CompareAnswer,
    ForkAnswer,
    ForkQuestion,
    ListAnswer,
    MemoryOffAnswer,
    NoStepsAnswer,
    PageAnswer,
    Question,
    ResetAnswer,
    RestoreChoice,
    RestoreQuestion,
    ShowAnswer,
    StopAnswer,
)
from commands.i18n import step_label, t
from commands.target import CommandContext

if TYPE_CHECKING:  # the parser's command types; the parser itself imports the registry, which imports these
    from commands.parser import (
        Fork,
        MemoryOff,
        ReplayClear,
        ReplayCompare,
        ReplayList,
        ReplayRestore,
        ReplayShow,
        ReplayUndo,
        Reset,
        Stop,
    )


def _base(ctx: CommandContext) -> str:
    return ctx.base_url.rstrip("/")


def page_link(ctx: CommandContext) -> str:
    return f"{_base(ctx)}/replay?thread={quote(ctx.target.chat_id, safe='')}"


def chat_link(ctx: CommandContext, chat_id: str) -> str:
    return f"{_base(ctx)}/?thread={quote(chat_id, safe='')}"


async def page(ctx: CommandContext) -> CommandResult:
    """In the web chat, time travel (but clearing and undoing) happens on the page: a link to it."""
    count, link = len((await ctx.target.list_steps()).steps), page_link(ctx)
    text = t("page_steps", ctx.lang, count=count, link=link) if count else t("page_none", ctx.lang, link=link)
    return CommandResult("answer", text, PageAnswer(chat_id=ctx.target.chat_id, steps=count, link=link), ephemeral=True)


async def replay_list(cmd: ReplayList, ctx: CommandContext) -> CommandResult:
    listing = await ctx.target.list_steps()
    link, chat_id = page_link(ctx), ctx.target.chat_id
    if not listing.steps:
        return CommandResult("answer", t("no_steps", ctx.lang), ListAnswer(chat_id=chat_id, turns=[], link=link), ephemeral=True)
    text, turns = render.step_list(listing, ctx.lang, link)
    return CommandResult("answer", text, ListAnswer(chat_id=chat_id, turns=turns, count=len(listing.steps), link=link), ephemeral=True)


async def ask_restore(cmd: ReplayRestore, ctx: CommandContext) -> CommandResult:
    preview = await ctx.target.preview_restore(cmd.step)
    exact = replace(cmd, step=preview.step.step_id)
    # Files the chat's tools changed after the step, and no choice typed: the person picks one of three.
    choices = [] if cmd.what or not preview.files else [
        RestoreChoice(what=what, confirm=replace(exact, what=None if what == "conversation" else what).text())
        for what in ("conversation", "files", "both")
    ]
    question = RestoreQuestion(confirm=exact.text(), preview=preview, choices=choices)
    text = render.restore_question(preview, ctx.lang, cmd.what or ("" if choices else "conversation"))
    return CommandResult("confirm", text, question, ephemeral=True)


async def restore(cmd: ReplayRestore, ctx: CommandContext) -> CommandResult:
    done = await ctx.target.restore(cmd.step, what=cmd.what or "conversation", force=bool(cmd.force))
    return CommandResult("answer", render.restored(done, ctx.lang), done)


async def undo(cmd: ReplayUndo, ctx: CommandContext) -> CommandResult:
    done = await ctx.target.undo()
    return CommandResult("answer", render.undone(done, ctx.lang), done)


async def show(cmd: ReplayShow, ctx: CommandContext) -> CommandResult:
    step = await ctx.target.get_step(cmd.step, limit=render.SHOWN)
    return CommandResult("answer", render.step_view(step, ctx.lang), ShowAnswer(step=step), ephemeral=True)


async def compare(cmd: ReplayCompare, ctx: CommandContext) -> CommandResult:
    other, b = cmd.other()
    diff = await ctx.target.compare(cmd.a, b, other)
    return CommandResult("answer", render.comparison(diff, ctx.lang), CompareAnswer(comparison=diff), ephemeral=True)


async def ask_clear(cmd: ReplayClear, ctx: CommandContext) -> CommandResult:
    count = len((await ctx.target.list_steps()).steps)
    if not count:
        return CommandResult("answer", t("no_steps", ctx.lang), NoStepsAnswer(chat_id=ctx.target.chat_id, steps=0), ephemeral=True)
    question = ClearQuestion(confirm=cmd.text(), steps=count)
    return CommandResult("confirm", t("confirm_clear", ctx.lang, count=count), question, ephemeral=True)


async def clear(cmd: ReplayClear, ctx: CommandContext) -> CommandResult:
    done = await ctx.target.clear()
    return CommandResult("answer", t("cleared", ctx.lang, deleted=done.deleted), done)


async def ask_fork(cmd: Fork, ctx: CommandContext) -> CommandResult:
    step = await ctx.target.preview_fork(cmd.step)
    if step is None:  # a message's point before the chat's first message: a new empty chat, asked by that message
        return CommandResult("confirm", t("confirm_fork_start", ctx.lang), ForkQuestion(confirm=cmd.text(), step=None), ephemeral=True)
    text = t("confirm_fork", ctx.lang, label=render.label(step, ctx.lang), short_id=render.short_id(step.step_id))
    question = ForkQuestion(confirm=replace(cmd, step=step.step_id).text(), step=step)
    return CommandResult("confirm", text, question, ephemeral=True)


async def fork(cmd: Fork, ctx: CommandContext) -> CommandResult:
    done = await ctx.target.fork(cmd.step)
    link = chat_link(ctx, done.chat_id)
    origin = done.forked_from
    if origin is not None and origin.turn_index is not None and origin.iteration is not None:
        where = step_label(origin.turn_index, origin.iteration, ctx.lang)
    elif origin is not None and origin.step_id is None:  # from before the first message: no step
        where = t("start_label", ctx.lang)
    else:
        where = render.short_id(cmd.step)
    text = t("forked", ctx.lang, label=where, title=done.title, link=link)
    # `label` and `here` let a chat app open the fork in a thread of its own (bots/gateway.py).
    return CommandResult("answer", text, ForkAnswer(**dict(done), link=link, label=where, here=bool(cmd.here)))


async def stop(cmd: Stop, ctx: CommandContext) -> CommandResult:
    stopped = await ctx.target.stop()
    text = t("stopped" if stopped else "nothing_running", ctx.lang)
    return CommandResult("answer", text, StopAnswer(chat_id=ctx.target.chat_id, stopped=stopped))


async def reset(cmd: Reset, ctx: CommandContext) -> CommandResult:
    await ctx.target.reset()
    return CommandResult("answer", t("reset_done", ctx.lang), ResetAnswer(chat_id=ctx.target.chat_id))


async def ask_memory_off(cmd: MemoryOff, ctx: CommandContext) -> CommandResult:
    # It forgets and deletes every saved step, and cannot be undone: ask, as /replay clear does.
    await ctx.target.check_owner()
    return CommandResult("confirm", t("confirm_memory_off", ctx.lang), Question(confirm=cmd.text()), ephemeral=True)


async def memory_off(cmd: MemoryOff, ctx: CommandContext) -> CommandResult:
    await ctx.target.memory_off()
    return CommandResult("answer", t("memory_off_done", ctx.lang), MemoryOffAnswer(chat_id=ctx.target.chat_id, memory=False))
