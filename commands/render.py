"""Plain-text answers built from the rewind service's results, in the person's language."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from commands.answers import ListedStep, ListedTurn
from commands.i18n import step_label, t
from kazma_core.catalogue import sentence
from kazma_core.catalogue.commands import COMMANDS
from kazma_ui import step_views
from kazma_ui.rewind_results import Comparison, MessageView, Restored, RestorePreview, SideEffect, StepDetail, StepList, Undone

# Discord's 2000-character message is the smallest of the surfaces; a text that fits
# it can be sent whole everywhere.
TEXT_LIMIT = 1900
SHOWN = 50  # /replay show reads the step's newest messages: no more of them fit in one chat message
LINE_LIMIT = 160
QUESTION_LIMIT = 60


def short(text: Any, limit: int = LINE_LIMIT) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


APPROVAL_TEXT_LIMIT = 1500  # the text to be written, as a chat message shows it with the card's words


def size_text(count: int) -> str:
    """A number of bytes as a person reads it, as the web pages write it (Kazma.size): 5 B, 2.1 KB, 3.4 MB."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{round(count / 102.4) / 10:g} KB"
    return f"{round(count / (1024 * 102.4)) / 10:g} MB"


def approval_question(tool: str, args: Mapping[str, Any], lang: str) -> str | None:
    """An approval card in people's words, as the web chat says it (the web catalogue's
    approval_write_* sentences): what will be written where, then the text. None for a tool
    these words do not cover."""
    path = args.get("path")
    if tool != "write_file" or not isinstance(path, str):
        return None
    text = str(args.get("text") or "")
    title = sentence("web.approval_write_title", lang)
    if not text:
        return f"{title}\n{sentence('web.approval_write_empty', lang, path=path)}"
    where = sentence("web.approval_write_where", lang, size=size_text(len(text.encode())), path=path)
    shown = text if len(text) <= APPROVAL_TEXT_LIMIT else text[: APPROVAL_TEXT_LIMIT - 1] + "…"
    return f"{title}\n{where}\n\n{shown}"


def short_id(step_id: str) -> str:
    return step_id[:8]


class Labelled(Protocol):
    """A step as a list or a comparison shows it: anything with a turn and an iteration."""

    @property
    def turn_index(self) -> int: ...

    @property
    def iteration(self) -> int: ...


def label(step: Labelled, lang: str) -> str:
    return step_label(step.turn_index, step.iteration, lang)


def _value(value: Any, lang: str = "en") -> str:
    if value in ({}, [], (), None, ""):
        return "—"
    return step_views.value_text(value, lang)


def _cost(cost: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {_value(v)}" for k, v in cost.items())


def message_line(view: MessageView, lang: str) -> str:
    """One saved message as "Kazma: → remember (fact: tea)": the rendering every surface shares."""
    return step_views.message_line(view, lang, LINE_LIMIT)


def step_list(listing: StepList, lang: str, link: str) -> tuple[str, list[ListedTurn]]:
    """The chat's steps turn by turn, newest turns kept when they do not all fit."""
    turns: list[ListedTurn] = []
    blocks: list[list[str]] = []
    done = {s.step_id: s.did for turn in listing.turns for s in turn.steps}
    for turn in listing.turns:
        steps = [
            ListedStep(
                step=s.step, step_id=s.step_id, label=step_label(turn.turn_index, s.step, lang), truncated=s.truncated,
                short_id=short_id(s.step_id),
            )
            for s in turn.steps
        ]
        turns.append(ListedTurn(turn_index=turn.turn_index, questions=turn.questions, steps=steps))
        questions = short(" / ".join(turn.questions), QUESTION_LIMIT)
        lines = [t("turn_header", lang, turn=turn.turn_index, questions=questions)]
        previous: int | None = None
        for s in steps:
            if previous is not None and s.step > previous + 1:  # the long-turn rule left these out
                lines.append(t("gap", lang, first=previous + 1, last=s.step - 1))
            did = step_views.step_action(done.get(s.step_id), lang)
            lines.append(f"  {s.label} · {s.short_id}" + (f" {t('cut', lang)}" if s.truncated else "") + (f" · {did}" if did else ""))
            previous = s.step
        blocks.append(lines)
    header = t("steps_header", lang, count=len(listing.steps))
    sizes = [sum(len(line) + 1 for line in block) for block in blocks]
    older = t("older_hidden", lang, count=len(blocks), link=link)
    first = 0  # the oldest turns go first when the list does not fit
    if len(header) + sum(sizes) > TEXT_LIMIT:
        while first < len(blocks) - 1 and len(header) + sum(sizes[first:]) + len(older) + 1 > TEXT_LIMIT:
            first += 1
    lines = [header, *(line for block in blocks[first:] for line in block)]
    if any(s.truncated for turn in turns[first:] for s in turn.steps):
        lines.append(t("cut_why", lang))
    if first:
        lines.append(t("older_hidden", lang, count=first, link=link))
    return fit("\n".join(lines)), turns


def side_effect_line(effect: SideEffect, lang: str) -> str:
    key = f"effect_{effect.kind}"
    name = COMMANDS[key].get(lang) if key in COMMANDS else effect.kind
    return short(f"• {name} ({effect.tool}): {_value(effect.args)}")


def restore_question(preview: RestorePreview, lang: str, what: str = "conversation") -> str:
    """The question before a restore: what it takes back, the files it would change (when `what` takes
    them, or the person is still to choose: ""), and the side effects it does not undo."""
    step = preview.step
    lines = [
        t("confirm_restore", lang, label=label(step, lang), short_id=short_id(step.step_id)),
        t("takes_back" if what != "files" else "takes_back_files_only", lang, turns=preview.later_turns, steps=preview.later_steps),
    ]
    if preview.files and what != "conversation":
        lines.append(t("files_would_change" if what else "files_choose", lang))
        for f in preview.files[:10]:
            how = t(f"file_{f.change}", lang) + (" " + t("file_changed_since", lang) if f.changed_since else "")
            lines.append(f"• {f.path}: {how}")
    # With the files, what their tools wrote is undone too: only the rest stays done.
    effects = [e for e in preview.side_effects if what not in ("files", "both") or e.kind != "file_written"]
    if effects:
        lines.append(t("not_undone", lang))
        lines += [side_effect_line(e, lang) for e in effects[:10]]
    else:
        lines.append(t("no_side_effects", lang))
    return fit("\n".join(lines))


def restored(done: Restored, lang: str) -> str:
    """A restore's confirmation, with how to undo it while it can be."""
    text = t("restored", lang, label=label(done.step, lang), removed=done.removed_steps)
    if done.files:
        text += " " + t("restored_files", lang, count=len(done.files))
    if done.undo is not None:
        text += " " + t("restored_undo", lang, undo="/replay undo")
    return text


def undone(done: Undone, lang: str) -> str:
    back = done.back
    return t("undone", lang, messages=back.messages, memories=back.memories, steps=back.steps)


def step_view(detail: StepDetail, lang: str) -> str:
    """A step's messages (the newest that fit), plan, routing and cost."""
    step = detail.step
    head = [t("show_header", lang, label=label(step, lang), short_id=short_id(step.step_id), model=step.model or "?")]
    if step.truncated:
        head.append(t("show_cut", lang))
    tail = [
        t("plan", lang, plan=_value(detail.plan or [])),
        t("routing", lang, routing=_value(detail.routing or {})),
        t("cost", lang, cost=_cost(detail.cost or {})),
    ]
    messages = [message_line(m, lang) for m in detail.messages]
    kept: list[str] = []
    budget = TEXT_LIMIT - len("\n".join([*head, *tail])) - 200
    for line in reversed(messages):
        if budget - len(line) - 1 < 0:
            break
        kept.insert(0, line)
        budget -= len(line) + 1
    body = [t("show_messages", lang, count=step.message_count)]
    if len(kept) < step.message_count:
        body.append(t("earlier_messages", lang, count=step.message_count - len(kept)))
    return fit("\n".join([*head, *body, *kept, *tail]))


def comparison(diff: Comparison, lang: str) -> str:
    """The comparison summary of the rewind service's rendering, in the person's language."""
    return fit(step_views.render_comparison(diff, lang))


def fit(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"
