"""The chat's event stream: every event has an id, and a reader that lost its connection
resumes after the last id it saw, getting what it missed once, or a `reload` when that is gone.

Over real HTTP against the real server (the route, sse-starlette, httpx-sse), and on the
in-process bus itself for what takes hundreds of events to reach over HTTP.
"""

from __future__ import annotations

from collections.abc import Sequence

from kazma_core.events import Event, LocalEventBus
from kazma_core.settings import Settings
from tests.conftest import Person
from tests.helpers import SseEvent, new_chat, open_events, say, steps_of
from tests.http_server import RunningServer, serve_kazma


def said_in(events: Sequence[Event | SseEvent]) -> list[tuple[str, str]]:
    return [(e.data["role"], e.data["text"]) for e in events if e.type == "message"]


# -- over HTTP ----------------------------------------------------------------------------------------


async def test_a_reader_back_with_its_last_event_id_gets_what_it_missed_once_then_live_events(
    server: RunningServer, ann: Person
) -> None:
    chat = await new_chat(ann.http)
    async with open_events(ann.http, chat) as first:
        await say(ann.http, chat, "calc 1+1")
        await first.until("turn", turn_index=1)
    await say(ann.http, chat, "calc 2+2")  # while nobody reads the stream

    async with open_events(ann.http, chat, first.last_id) as second:
        await second.until("turn", turn_index=2)
        await say(ann.http, chat, "calc 3+3")
        await second.until("turn", turn_index=3)

    assert said_in(first.seen) == [("user", "calc 1+1"), ("assistant", "1+1 = 2")]
    assert said_in(second.seen) == [("user", "calc 2+2"), ("assistant", "2+2 = 4"), ("user", "calc 3+3"), ("assistant", "3+3 = 6")]
    # Each step announced once, in order, across the two connections.
    announced_steps = [e.data["snapshot_id"] for e in first.seen + second.seen if e.type == "snapshot"]
    assert announced_steps == [s["snapshot_id"] for s in await steps_of(ann.http, chat)]
    ids = [e.id for e in first.seen + second.seen]
    assert all(ids) and len(set(ids)) == len(ids)


async def test_a_reader_back_with_an_id_the_server_never_gave_gets_a_reload_then_live_events(
    server: RunningServer, ann: Person
) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    async with open_events(ann.http, chat, "not-an-event-id") as events:
        reload = await events.next()
        await say(ann.http, chat, "calc 2+2")
        await events.until("turn", turn_index=2)
    assert (reload.type, reload.data) == ("reload", {"reason": "missed"})
    assert said_in(events.seen) == [("user", "calc 2+2"), ("assistant", "2+2 = 4")]

    # The reload's id is a place to resume from like any other: nothing before it comes again.
    async with open_events(ann.http, chat, reload.id) as again:
        await say(ann.http, chat, "calc 3+3")
        await again.until("turn", turn_index=3)
    assert said_in(again.seen)[:2] == [("user", "calc 2+2"), ("assistant", "2+2 = 4")]
    assert said_in(again.seen)[2:] == [("user", "calc 3+3"), ("assistant", "3+3 = 6")]


async def test_an_id_from_before_the_server_restarted_gets_a_reload(settings: Settings) -> None:
    async with serve_kazma(settings) as first:
        _, token = await first.add_user("ann")
        async with first.client(token) as http:
            chat = await new_chat(http)
            async with open_events(http, chat) as events:
                await say(http, chat, "calc 1+1")
                await events.until("turn", turn_index=1)
    async with serve_kazma(settings) as second, second.client(token) as http, open_events(http, chat, events.last_id) as resumed:
        reload = await resumed.next()
    assert (reload.type, reload.data) == ("reload", {"reason": "missed"})


# -- the bus --------------------------------------------------------------------------------------------


async def test_a_resume_from_further_back_than_the_bus_keeps_gets_a_reload() -> None:
    bus = LocalEventBus(backlog=3)
    async with bus.subscribe("chat") as events:
        for n in range(5):
            bus.publish("chat", "message", {"n": n})
        seen = [await anext(events) for _ in range(5)]
    async with bus.subscribe("chat", seen[1].id) as events:  # events 2, 3 and 4 are kept
        resumed = [await anext(events) for _ in range(3)]
    assert [e.data["n"] for e in resumed] == [2, 3, 4]
    async with bus.subscribe("chat", seen[0].id) as events:  # event 1 is gone
        reload = await anext(events)
    assert (reload.type, reload.data, reload.id) == ("reload", {"reason": "missed"}, seen[-1].id)


async def test_a_chat_the_bus_stopped_keeping_events_for_gets_a_reload_and_others_resume() -> None:
    bus = LocalEventBus(backlog_chats=2)
    async with bus.subscribe("a") as events:
        bus.publish("a", "message", {"n": 1})
        seen_a = (await anext(events)).id
    bus.publish("a", "message", {"n": 2})  # missed by that reader
    async with bus.subscribe("b") as events:
        bus.publish("b", "message", {"n": 1})
        seen_b = (await anext(events)).id
    bus.publish("c", "message", {"n": 1})  # a third chat: the least recently active one, a, is let go
    async with bus.subscribe("a", seen_a) as events:
        assert (await anext(events)).type == "reload"
    async with bus.subscribe("b", seen_b) as events:
        bus.publish("b", "message", {"n": 2})
        assert (await anext(events)).data == {"n": 2}


async def test_a_listener_that_stops_reading_gets_one_reload_instead_of_a_backlog() -> None:
    bus = LocalEventBus(queue_size=3)
    async with bus.subscribe("chat") as slow, bus.subscribe("chat") as reader:
        for n in range(4):  # the fourth finds the slow listener's queue full
            bus.publish("chat", "message", {"n": n})
            assert (await anext(reader)).data == {"n": n}
        bus.publish("chat", "message", {"n": 4})
        reload, after = await anext(slow), await anext(slow)
    assert (reload.type, reload.data) == ("reload", {"reason": "lagging"})
    assert after.data == {"n": 4}  # and then the live events again, nothing of the backlog
