"""An answer's Markdown as HTML the chat page can show: rendered by markdown-it-py, then
sanitised by nh3 (ammonia), so that no message can run script or load anything from elsewhere.

Rendered at the web layer, for the transcript rows and the event stream's answers (the
`html` field); the text stays as it was said everywhere else.

What passes: headings, paragraphs, lists, emphasis, strikethrough, quotes, code (inline and
blocks, their language kept as a `language-*` class), tables and links (http, https, mailto
or on this server; opened in a new tab with rel="noopener noreferrer nofollow"). What never
does: raw HTML of the message (shown as text), images (each would be a request to wherever
it points), styles, event handlers and any other scheme (`javascript:`, `data:`).
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

from kazma_core.catalogue.errors import ERRORS

# CommonMark with GitHub's tables and strikethrough; the message's own HTML is text, not markup;
# a line break stays one (as chat apps show an answer's lines).
_PARSER = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)
# Images are not rendered at all: the parser's rule is off, so `![alt](src)` stays as its text.
_PARSER.disable("image")

_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code", "pre",
    "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
}
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "code": {"class"}}
_SCHEMES = {"http", "https", "mailto"}


def _attribute(tag: str, name: str, value: str) -> str | None:
    """A code block's language class is kept (`language-python`); any other class goes."""
    if name == "class":
        return value if tag == "code" and value.startswith("language-") and " " not in value else None
    return value


@lru_cache(maxsize=2048)
def render(text: str) -> str:
    """The answer's text as sanitised HTML (the same text gives the same HTML, kept for reuse)."""
    return nh3.clean(
        _PARSER.render(text),
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        attribute_filter=_attribute,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    ).strip()


# A Stop cut while the answer was said leaves a "stopped" row of what was said, then the reason
# (agent/graph.py); a Stop before anything was said leaves the reason alone.
_STOPPED = ERRORS["turn_stopped"].en


def answer_html(role: str, text: str) -> str | None:
    """The HTML of a message the page shows rendered: Kazma's answers, and what a stopped answer
    had said; None for any other message."""
    if role == "assistant":
        return render(text)
    if role == "stopped" and text != _STOPPED:
        return render(text.removesuffix(f"\n\n({_STOPPED})"))
    return None
