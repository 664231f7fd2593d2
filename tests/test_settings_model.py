"""The Settings page's model section over real HTTP: the owner reads the provider, the model's name,
its server and the system prompt; the key (and a password in the address) never leaves the server."""

from __future__ import annotations

from pathlib import Path

from kazma_core.agent.graph import SYSTEM_PROMPT
from kazma_core.sizes import human_size
from tests.conftest import make_settings
from tests.http_server import serve_kazma


async def test_the_owner_reads_the_model_and_its_prompt_but_never_its_key(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", model={
        "provider": "openai", "name": "llama3.1", "api_key": "sk-very-secret-key",
        "base_url": "http://kazma:hunter2@127.0.0.1:9/v1?token=also-secret",
    })
    async with serve_kazma(settings) as server:
        _, token = await server.add_user("olive", role="owner")
        async with server.client(token) as http:
            response = await http.get("/api/settings")
    assert response.status_code == 200, response.text
    assert response.json()["model"] == {
        "provider": "openai", "name": "llama3.1", "base_url": "http://127.0.0.1:9/v1",
        "system_prompt": SYSTEM_PROMPT, "live": False,
    }
    for secret in ("sk-very-secret-key", "hunter2", "also-secret"):
        assert secret not in response.text


def test_sizes_read_in_kb_mb_and_gb_in_both_languages() -> None:
    assert [human_size(n) for n in (900, 136_192, 1536, 2_097_152, 3 * 1024**3)] == [
        "900 B", "133 KB", "1.5 KB", "2 MB", "3 GB"]
    assert human_size(2_097_152, "ar") == "2 م.ب"
