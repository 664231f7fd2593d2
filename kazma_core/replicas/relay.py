"""Events across replicas: every event published on one replica reaches the others' buses.

With ``database.url`` set, several ``kazma serve`` share the database but each has its own
in-process bus (events.py), and a person's tab may be connected to any of them. The relay
sends each event published here as a PostgreSQL notification (NOTIFY on one channel), and
publishes the notifications of the other replicas on this bus, never sending those again
(each carries the replica it came from). So a restore on replica B reloads the tabs open
on replica A, and a turn running on A streams to a client connected to B.

A notification holds at most 8000 bytes. A bigger event (a long answer) is written to the
table ``relayed_events`` and its notification carries the row's id; the rows are deleted
after KEEP_SECONDS, long past their delivery. Notifications of one replica arrive in the
order it sent them, and each replica handles them one at a time, so a chat's events keep
their order.

Two connections of its own, each opened again when lost: one listens, one sends. An event
can be lost while the database is out of reach; when the listening connection comes back,
every chat watched here gets a ``reload``, as a tab that fell behind does. Event ids
(Last-Event-ID) are the bus's, per process: a stream resumed on another replica may get a
``reload`` instead of the events it missed.

The same channel carries requests, which are not events of a chat: a replica asks the
others for something only the one holding a chat can do (`ask`, `answer`), as Stop asks
the replica running the turn to stop it (kazma_core/chats.py). A request is heard once
this replica listens: the server starts listening when it starts (`RelayedBus.hear`).

A replica alone sends nothing: a turn's five or so notifications cost this process about 2 ms of
CPU (of about 15) and the database its share. Whenever it starts listening, a replica says so (HELLO) and every
other one listening answers (HERE); one that heard nobody within SETTLE_SECONDS counts itself
alone and stops sending until it hears another, which it then tells (and itself) to reload the
chats they watch, as after a gap. Until it listens (a command run once), or while its listener
is away, it cannot know and sends everything. The first replica it hears after starting also
reloads the chats watched here: an event of another sent before it heard this one's HELLO.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any

import orjson
import psycopg
from psycopg import sql

from kazma_core.events import Event, EventBus
from kazma_core.replicas.identity import replica_id
from kazma_core.settings import Settings
from kazma_core.stores.backends import APP_SCHEMA, database_url
from kazma_core.stores.postgres import redact

log = logging.getLogger(__name__)

CHANNEL = "kazma_events"
MAX_PAYLOAD = 7900  # bytes: PostgreSQL refuses a notification of 8000 or more
BATCH = 64  # events sent in one statement at most
KEEP_SECONDS = 300.0
FLUSH_SECONDS = 2.0  # at close, how long events still queued may take to leave
CONNECT_SECONDS = 10
FIRST_RETRY, LAST_RETRY = 0.5, 10.0
SETTLE_SECONDS = 1.0  # after a HELLO, how long the others have to answer before this replica counts itself alone
HELLO, HERE, GAP = "relay-hello", "relay-here", "relay-gap"  # the replicas' own requests (see above)

Deliver = Callable[[str, str, dict[str, Any]], None]
Asked = Callable[[str, str], None]  # (what is asked, chat id)
Answer = Callable[[str], Coroutine[Any, Any, object]]


class EventRelay:
    """Sends this replica's events as notifications, and delivers the other replicas' ones."""

    def __init__(
        self, url: str, schema: str, deliver: Deliver, on_gap: Callable[[], None], on_ask: Asked, origin: str = "",
    ) -> None:
        self.url = url
        self.origin = origin or replica_id()  # who the notifications sent here come from
        self.deliver = deliver
        self.on_gap = on_gap  # notifications may have been missed: the listener was away
        self.on_ask = on_ask
        self._table = sql.Identifier(schema, "relayed_events")
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._talk: psycopg.AsyncConnection[Any] | None = None
        self._talk_lock = asyncio.Lock()
        self._sent = 0
        # Whether another replica hears this one: None while unknown (everything is sent), False once
        # nobody answered the HELLO (nothing is), True once another was heard.
        self._others: bool | None = None
        self._hello = 0  # which HELLO the settling waits for (a new one at each listening)

    # sending ------------------------------------------------------------------------------
    def send(self, chat_id: str, type_: str, data: dict[str, Any]) -> None:
        """Queue an event of this replica for the others (called from publish, which does not wait)."""
        self._queue({"o": self.origin, "c": chat_id, "t": type_, "d": data})

    def ask(self, what: str, chat_id: str) -> None:
        """Queue a request about a chat for the other replicas (in order with the events sent before it)."""
        self._queue({"o": self.origin, "a": what, "c": chat_id})

    @property
    def alone(self) -> bool:
        """No other replica heard this one's HELLO: what it would send reaches nobody."""
        return self._others is False

    def _queue(self, message: dict[str, Any], always: bool = False) -> None:
        if self._others is False and not always:
            return
        # Numbered: PostgreSQL delivers identical notifications sent in one transaction once, and a
        # batch is one transaction (two equal events in a row, such as the same delta twice, stay two).
        self._sent += 1
        message["n"] = self._sent
        self._outbox.put_nowait(orjson.dumps(message))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_all(), name="events-relay-send")

    async def _send_all(self) -> None:
        while True:
            # The events queued meanwhile go together: the small ones in one round trip, in order.
            batch = [await self._outbox.get()]
            while not self._outbox.empty() and len(batch) < BATCH:
                batch.append(self._outbox.get_nowait())
            small = [p for p in batch if len(p) <= MAX_PAYLOAD]
            try:
                if len(small) == len(batch):
                    await self._notify(batch)
                else:
                    for payload in batch:
                        await self._notify([payload])
            except psycopg.Error as err:  # twice refused: these events are lost; the next ones may pass
                log.warning("%d event(s) could not be relayed to the other replicas (%s)", len(batch), err)
            finally:
                for _ in batch:
                    self._outbox.task_done()

    async def _notify(self, payloads: list[bytes]) -> None:
        """Send the payloads in order: all small ones in one statement, or one large one by reference."""
        payload = payloads[0]
        for attempt in (1, 2):
            try:
                async with self._talk_lock:
                    conn = await self._talking()
                    if len(payloads) > 1 or len(payload) <= MAX_PAYLOAD:
                        await conn.execute(
                            "SELECT pg_notify(%s, p) FROM unnest(%s::text[]) WITH ORDINALITY AS t(p, i) ORDER BY i",
                            (CHANNEL, [p.decode() for p in payloads]),
                        )
                        return
                    async with conn.transaction():
                        now = time.time()
                        await conn.execute(sql.SQL("DELETE FROM {} WHERE created_at < %s").format(self._table),
                                           (now - KEEP_SECONDS,))
                        cur = await conn.execute(
                            sql.SQL("INSERT INTO {} (payload, created_at) VALUES (%s, %s) RETURNING id").format(self._table),
                            (payload.decode(), now),
                        )
                        row = await cur.fetchone()
                        assert row is not None
                        ref = orjson.dumps({"o": self.origin, "r": row[0]}).decode()
                        # Delivered at commit: the row is there when the others read it.
                        await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, ref))
                    return
            except psycopg.OperationalError:
                await self._drop_talk()
                if attempt == 2:
                    raise

    async def _talking(self) -> psycopg.AsyncConnection[Any]:
        if self._talk is None or self._talk.closed:
            self._talk = await psycopg.AsyncConnection.connect(self.url, autocommit=True, connect_timeout=CONNECT_SECONDS)
        return self._talk

    async def _drop_talk(self) -> None:
        talk, self._talk = self._talk, None
        if talk is not None:
            with contextlib.suppress(psycopg.Error):
                await talk.close()

    # listening ----------------------------------------------------------------------------
    async def listening(self) -> None:
        """Start listening (once), and wait until the notifications are heard or the wait is over."""
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._listen(), name="events-relay-listen")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), CONNECT_SECONDS)

    async def _listen(self) -> None:
        delay, lost = FIRST_RETRY, False
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.url, autocommit=True, connect_timeout=CONNECT_SECONDS
                ) as conn:
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                    self._say_hello()
                    self._listening.set()
                    if lost:
                        log.info("events from the other replicas are heard again")
                        self.on_gap()
                    delay = FIRST_RETRY
                    async for note in conn.notifies():
                        await self._receive(note.payload)
            except psycopg.Error as err:
                self._listening.clear()
                self._others = None  # unheard meanwhile: whoever started is not known
                if not lost:
                    log.warning("events from the other replicas are not heard (%s: %s); reconnecting to %s",
                                type(err).__name__, str(err).strip(), redact(self.url))
                lost = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, LAST_RETRY)

    def _say_hello(self) -> None:
        """Listening (again): tell the others, and count this replica alone if nobody answers soon."""
        self._others, self._hello = None, self._hello + 1
        self._queue({"o": self.origin, "a": HELLO, "c": ""}, always=True)
        hello = self._hello
        asyncio.get_running_loop().call_later(SETTLE_SECONDS, self._settled, hello)

    def _settled(self, hello: int) -> None:
        if hello == self._hello and self._others is None and self._listening.is_set():
            self._others = False

    def _heard_another(self, what: object) -> None:
        """A notification of another replica: it hears this one's from now on."""
        if what == HELLO:
            self._queue({"o": self.origin, "a": HERE, "c": ""}, always=True)
        if self._others is True:
            return
        was_alone, self._others = self._others is False, True
        if what == HELLO and was_alone:
            return  # a replica starting now: it missed nothing of this one's it could have seen
        # Events of the other sent before it heard this replica; when this one counted itself alone,
        # its own events the other did not get: both reload what they watch.
        self.on_gap()
        if was_alone:
            self._queue({"o": self.origin, "a": GAP, "c": ""})

    async def _receive(self, payload: str) -> None:
        try:
            message = orjson.loads(payload)
        except orjson.JSONDecodeError:
            log.warning("a notification on %s that is not a Kazma event was ignored", CHANNEL)
            return
        if message.get("o") == self.origin:
            return  # our own, published here already
        what = message.get("a")
        self._heard_another(what)
        if what in (HELLO, HERE):
            return
        if what == GAP:
            self.on_gap()
            return
        if "r" in message:
            message = await self._fetch(int(message["r"]))
            if message is None:
                return
        if "a" in message:
            self.on_ask(str(message["a"]), str(message["c"]))
            return
        self.deliver(message["c"], message["t"], message["d"])

    async def _fetch(self, ref: int) -> dict[str, Any] | None:
        try:
            async with self._talk_lock:
                conn = await self._talking()
                cur = await conn.execute(sql.SQL("SELECT payload FROM {} WHERE id = %s").format(self._table), (ref,))
                row = await cur.fetchone()
        except psycopg.OperationalError as err:
            await self._drop_talk()
            log.warning("a relayed event could not be read (%s); the chats watched here reload", err)
            self.on_gap()
            return None
        return orjson.loads(row[0]) if row else None

    # closing ------------------------------------------------------------------------------
    async def close(self) -> None:
        """Let the queued events leave (for a moment at most), then close both connections."""
        if self._sender is not None and not self._sender.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox.join(), FLUSH_SECONDS)
        for task in (self._sender, self._listener):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (self._sender, self._listener) if t is not None), return_exceptions=True)
        await self._drop_talk()


class RelayedBus:
    """The process's event bus, its events also sent to the other replicas (same calls as EventBus)."""

    def __init__(self, local: EventBus, url: str, schema: str) -> None:
        self.local = local
        self.relay = EventRelay(url, schema, local.publish, self._reload_watched, self._asked)
        self._watched: collections.Counter[str] = collections.Counter()
        self._answers: dict[str, Answer] = {}
        self._answering: set[asyncio.Task[object]] = set()

    def publish(self, chat_id: str, type_: str, data: dict[str, Any]) -> None:
        self.local.publish(chat_id, type_, data)
        self.relay.send(chat_id, type_, data)

    def subscribe(
        self, chat_id: str, last_event_id: str | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[Event]]:
        """The local bus's subscription; the first one starts listening to the other replicas.
        Event ids are this process's: an id given by another replica gets a `reload`."""
        return self._subscribed(chat_id, last_event_id)

    @contextlib.asynccontextmanager
    async def _subscribed(self, chat_id: str, last_event_id: str | None) -> AsyncIterator[AsyncIterator[Event]]:
        await self.relay.listening()  # a subscriber told it is connected hears the other replicas too
        self._watched[chat_id] += 1
        try:
            async with self.local.subscribe(chat_id, last_event_id) as events:
                yield events
        finally:
            self._watched[chat_id] -= 1
            if self._watched[chat_id] <= 0:
                del self._watched[chat_id]

    @contextlib.asynccontextmanager
    async def every_chat(self) -> AsyncIterator[asyncio.Queue[tuple[str, Event]]]:
        """The local bus's follower of every chat, hearing the other replicas' events too."""
        await self.relay.listening()
        async with self.local.every_chat() as tap:
            yield tap

    async def hear(self) -> None:
        """Listen to the other replicas now, watched chats or not: their requests reach this one."""
        await self.relay.listening()

    def answer(self, what: str, handler: Answer) -> None:
        """Run `handler(chat_id)` whenever another replica asks `what` about a chat."""
        self._answers[what] = handler

    def ask(self, what: str, chat_id: str) -> None:
        """Ask every other replica `what` about the chat; those that can, do it (nothing is answered back)."""
        self.relay.ask(what, chat_id)

    def _asked(self, what: str, chat_id: str) -> None:
        handler = self._answers.get(what)
        if handler is None:
            log.warning("another replica asked %r of chat %s, which this one does not do", what, chat_id)
            return
        task = asyncio.get_running_loop().create_task(handler(chat_id), name=f"asked-{what}")
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    def _reload_watched(self) -> None:
        for chat_id in list(self._watched):
            self.local.publish(chat_id, "reload", {"reason": "relay_gap"})

    async def close(self) -> None:
        for task in list(self._answering):
            task.cancel()
        await asyncio.gather(*self._answering, return_exceptions=True)
        await self.relay.close()


def ask_replicas(bus: EventBus, what: str, chat_id: str) -> bool:
    """Ask the other replicas `what` about the chat; False when there are none (the bus is this process's only)."""
    if not isinstance(bus, RelayedBus):
        return False
    bus.ask(what, chat_id)
    return True


def shared_bus(settings: Settings, local: EventBus) -> EventBus:
    """The bus the core publishes on: the process's own, relayed to the other replicas when they share a database."""
    url = database_url(settings)
    return RelayedBus(local, url, APP_SCHEMA) if url else local
