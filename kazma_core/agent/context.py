"""What the model is given of a chat: its newest messages that fit `model.context_tokens`.

A chat kept for a year outgrows every model's context window (a real model refuses a prompt
over it), and giving the model the whole of it would cost each call a pass over every message
(LangChain walks the prompt at every call, for its callbacks and its message checks: most of a
turn's CPU in a chat of 10,000 messages). So each call is given the system prompt (with the
remembered facts) and the newest messages whose estimated tokens fit the budget, starting at a
message of the person, so that no tool result is given without the call that asked for it. The
turn being answered is always given whole, even when it alone is over the budget. The chat
itself keeps everything: the transcript, the steps, a restore and a fork are not windowed.

The window is found from the newest message back, so its cost is the window's, never the chat's:
LangChain's `trim_messages` counts the whole conversation first, the cost this module avoids.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from kazma_core.messages import MessageList

# About four characters a token, as tokenizers average on English text (the offline model
# counts its usage the same way).
CHARS_PER_TOKEN = 4


def message_tokens(message: BaseMessage) -> int:
    """A message's estimated tokens: its text and its tool calls (their names and arguments), four
    characters a token."""
    content = message.content
    chars = len(content) if content.__class__ is str else len(str(content))
    calls = message.__dict__.get("tool_calls")  # an AIMessage's
    if calls:
        chars += sum(len(call["name"]) + len(str(call["args"])) for call in calls)
    return chars // CHARS_PER_TOKEN + 3  # a few tokens of its own framing (role, separators)


def context_window(messages: Sequence[BaseMessage], budget: int) -> Sequence[BaseMessage]:
    """The newest messages within budget estimated tokens, from a person's message on; the
    whole conversation when it fits; at least the turn being answered (from its question)."""
    start = _fit(messages, budget)
    if start == 0:
        return messages
    # Over the budget at messages[start - 1]: begin at the first question of the person after it,
    # else (the current turn alone is over the budget) at the current turn's question.
    first = next((i for i in range(start, len(messages)) if isinstance(messages[i], HumanMessage)), None)
    if first is None:
        first = next((i for i in range(start - 1, -1, -1) if isinstance(messages[i], HumanMessage)), 0)
    return messages[first:]


def _fit(messages: Sequence[BaseMessage], budget: int) -> int:
    """Where the newest messages within the budget begin. A chat's list knows
    where its window began the step before (MessageList.window): the window moves on by the
    messages added since, not found again from the end (0.3 ms a turn at a 650-message window)."""
    count = len(messages)
    known = messages.window if isinstance(messages, MessageList) else None
    if known is not None and known[0] == budget and known[1] <= count:
        _, seen, start, used = known
        used += sum(map(message_tokens, messages[seen:]))
        while used > budget and start < count:  # the oldest ones leave the window
            used -= message_tokens(messages[start])
            start += 1
    else:
        used, start = 0, count
        while start > 0:
            tokens = message_tokens(messages[start - 1])
            if used + tokens > budget:
                break
            used += tokens
            start -= 1
    if isinstance(messages, MessageList):
        messages.window = (budget, count, start, used)  # its tokens: `used`
    return start
