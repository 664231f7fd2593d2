"""Run a parsed command through the registry: its handler, or its question first.

Every surface dispatches here: the web chat's command route and the chat apps with a
`ServiceTarget`, the TUI with its `HttpTarget`. A surface that shows refusals as answers
calls `execute`; one that handles them itself (the TUI, which must tell a lost server
from a refusal) calls `dispatch`.
"""

from __future__ import annotations

from commands import handlers, registry
from commands.answers import CommandResult, Refusal
from commands.i18n import error_text
from commands.parser import Command, Usage
from commands.target import CommandContext
from kazma_core.errors import KazmaError


async def dispatch(cmd: Command | Usage, ctx: CommandContext) -> CommandResult:
    """The command's answer, or its question when it asks one and the person has not said yes yet.
    A refusal is raised (a KazmaError)."""
    surface = ctx.target.surface
    found = registry.find(cmd.command if isinstance(cmd, Usage) else cmd.path)
    if surface == "web" and found is not None and found.cmd.web is not None:
        # In the web chat, time travel (but clearing and undoing) happens on the page, where a
        # step can be read before it is used: the command answers with a link to it.
        return await handlers.page(ctx)
    if isinstance(cmd, Usage):
        raise cmd.error(surface)
    declared = registry.leaf(cmd.path).cmd
    if declared.ask is not None and not ctx.confirmed:
        return await declared.ask(cmd, ctx)
    if declared.run is None:
        raise TypeError(f"the registry declares no handler for {cmd.path!r}")
    return await declared.run(cmd, ctx)


async def execute(cmd: Command | Usage, ctx: CommandContext) -> CommandResult:
    """As `dispatch`, with a refusal answered as an error result in the person's language."""
    try:
        return await dispatch(cmd, ctx)
    except KazmaError as err:
        return error_result(err, ctx.lang)


def error_result(err: KazmaError, lang: str) -> CommandResult:
    return CommandResult("error", error_text(err, lang), Refusal(error=err.code, **err.details), err.code, ephemeral=True)
