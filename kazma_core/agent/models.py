"""Chat models by setting: the offline model, or any OpenAI-compatible endpoint."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from kazma_core.agent.offline_model import OfflineChatModel
from kazma_core.settings import ModelSettings


def build_model(settings: ModelSettings) -> BaseChatModel:
    if settings.provider == "offline":
        return OfflineChatModel(model_name=settings.name)
    from langchain_openai import ChatOpenAI

    # OpenAI itself, or Ollama, vLLM, LM Studio: anything that speaks its chat API.
    return ChatOpenAI(
        model=settings.name,
        base_url=settings.base_url or None,
        api_key=settings.api_key.get_secret_value() or "not-needed",  # type: ignore[arg-type]
        temperature=settings.temperature,
        timeout=settings.timeout_seconds,
        max_retries=1,
    )
