"""Time to the first piece of an answer over HTTP: Kazma's beside the model server's own first token.

One process, one run: a fake OpenAI-compatible server on 127.0.0.1 that streams its answer word
by word (tests/fakes/openai_server.py, `--gap` seconds between words), Kazma served by uvicorn
with that server as its model, and a client that follows the chat's event stream. For each of
`--turns` messages it notes, on one clock (time.perf_counter):

- sent: the client posts the message (`wait=false`);
- model: the model server sends its first word;
- client: the client reads the first `delta` event.

`model → client` is what Kazma adds between the model's first token and the person's first
piece (the graph, the event bus, the SSE route, the network); `sent → client` is what a person
waits. The machine is shared and noisy: read the medians.

    .venv/bin/python bench/first_piece.py [--turns 30] [--gap 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import langchain_openai  # noqa: F401  imported before the server starts (it takes seconds)
import orjson
from httpx_sse import aconnect_sse

from tests.conftest import make_settings
from tests.fakes.openai_server import serve_fake_openai
from tests.http_server import serve_kazma


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.2f} ms  p90 {sorted(values)[int(len(values) * 0.9) - 1] * 1000:7.2f} ms"


async def run(turns: int, gap: float) -> None:
    async with serve_fake_openai("bench-key") as fake:
        fake.piece_seconds = gap
        model = {"provider": "openai", "name": "bench-model", "base_url": fake.base_url, "api_key": "bench-key"}
        with tempfile.TemporaryDirectory() as data:
            async with serve_kazma(make_settings(Path(data) / "data", model=model)) as server:
                _, token = await server.add_user("bench")
                async with server.client(token) as http:
                    chat = (await http.post("/api/chats")).json()["thread_id"]
                    sent_to_model, model_to_client, sent_to_client, direct = [], [], [], []
                    for n in range(turns + 1):
                        async with aconnect_sse(http, "GET", f"/api/chats/{chat}/events") as source:
                            events = source.aiter_sse()
                            sent = time.perf_counter()
                            started = await http.post(f"/api/chats/{chat}/messages", params={"wait": "false"},
                                                      json={"text": f"question {n} with a few more words"})
                            assert started.status_code == 202, started.text
                            async for sse in events:
                                if sse.event == "delta":
                                    client = time.perf_counter()
                                    break
                            async for sse in events:
                                if sse.event == "turn" and not orjson.loads(sse.data)["running"]:
                                    break
                        if n == 0:
                            continue  # the first turn warms the server up
                        first = fake.first_piece_at[-1]
                        sent_to_model.append(first - sent)
                        model_to_client.append(client - first)
                        sent_to_client.append(client - sent)
                    # The model server alone: a client straight to it, its first word.
                    async with httpx.AsyncClient(trust_env=False) as raw:
                        for _ in range(turns):
                            began = time.perf_counter()
                            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi there"}]}
                            async with raw.stream("POST", f"{fake.base_url}/chat/completions", json=body,
                                                  headers={"Authorization": "Bearer bench-key"}) as answer:
                                seen = False
                                async for line in answer.aiter_lines():
                                    if not seen and '"content": "' in line and '"content": ""' not in line:
                                        direct.append(time.perf_counter() - began)
                                        seen = True
    print(f"first piece of an answer over HTTP, {turns} turns, words {gap * 1000:.0f} ms apart (OpenAI-compatible fake)")
    print(f"  model server alone, request -> its first word:      {ms(direct)}")
    print(f"  Kazma: message sent -> model's first word:          {ms(sent_to_model)}")
    print(f"  Kazma: model's first word -> the client's first delta: {ms(model_to_client)}  (what Kazma adds)")
    print(f"  Kazma: message sent -> the client's first delta:    {ms(sent_to_client)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--gap", type=float, default=0.05)
    args = parser.parse_args()
    asyncio.run(run(args.turns, args.gap))


if __name__ == "__main__":
    main()
