"""The chat list: the person's chats, newest first; a fork says where it branched from."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.message import Message
from textual.widgets import Label, ListItem, ListView

from commands.i18n import step_label
from kazma_ui.tui.sentences import say

SHORT_ID = 8


def lineage(chat: dict[str, Any], titles: dict[str, str], lang: str = "en") -> str:
    """ "forked from <title>, turn T, step S", or "" for a chat that is not a fork."""
    origin = chat.get("forked_from")
    if not origin:
        return ""
    source = titles.get(origin["thread_id"]) or say("deleted_chat", lang, short_id=origin["thread_id"][:SHORT_ID])
    if origin.get("turn_index") is None or origin.get("iteration") is None:
        return say("forked_from", lang, source=source)
    return say("forked_from_step", lang, source=source, label=step_label(origin["turn_index"], origin["iteration"], lang))


class ChatItem(ListItem):
    DEFAULT_CSS = """
    ChatItem > Label {
        width: 100%;
    }
    ChatItem > .lineage {
        color: $text-muted;
    }
    """

    def __init__(self, chat: dict[str, Any], origin: str) -> None:
        labels = [Label(chat["title"], classes="title", markup=False)]
        if origin:
            labels.append(Label(origin, classes="lineage", markup=False))
        super().__init__(*labels)
        self.thread_id: str = chat["thread_id"]
        self.title = chat["title"]
        self.lineage = origin


class ChatList(ListView):
    DEFAULT_CSS = """
    ChatList {
        width: 32;
        border-right: solid $panel;
    }
    """

    class Opened(Message):
        """The person picked a chat to open."""

        def __init__(self, thread_id: str) -> None:
            super().__init__()
            self.thread_id = thread_id

    def __init__(self, lang: str = "en") -> None:
        super().__init__(id="chats")
        self.lang = lang
        # One refill at a time: two at once (a rename's answer and its `chat` event) would each
        # clear the list and then both add their chats, listing each twice.
        self._filling = asyncio.Lock()

    @property
    def items(self) -> list[ChatItem]:
        return list(self.query(ChatItem))

    async def show(self, chats: list[dict[str, Any]], current: str | None) -> None:
        titles = {c["thread_id"]: c["title"] for c in chats}
        async with self._filling:
            await self.clear()
            await self.extend(ChatItem(c, lineage(c, titles, self.lang)) for c in chats)
            self.mark(current)

    def mark(self, current: str | None) -> None:
        ids = [item.thread_id for item in self.items]
        if current in ids:
            self.index = ids.index(current)

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        if isinstance(event.item, ChatItem):
            self.post_message(self.Opened(event.item.thread_id))
