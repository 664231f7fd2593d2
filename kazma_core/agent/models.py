"""Chat models by setting: the offline model, any OpenAI-compatible endpoint, or Anthropic."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from kazma_core.agent.offline_model import OfflineChatModel
from kazma_core.settings import ModelSettings


def build_model(settings: ModelSettings) -> BaseChatModel:
    if settings.provider == "offline":
        return OfflineChatModel(model_name=settings.name, piece_seconds=settings.piece_seconds)
    if settings.provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(  # type: ignore[call-arg]
            model=settings.name,
            anthropic_api_url=settings.base_url or "https://api.anthropic.com",
            anthropic_api_key=settings.api_key,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            default_request_timeout=settings.timeout_seconds,
            max_retries=1,
        )
    from langchain_openai import ChatOpenAI

    # OpenAI itself, or Ollama, vLLM, LM Studio: anything that speaks its chat API.
    # max_tokens is the field's name, max_completion_tokens its alias; the type stub lists only the alias.
    return ChatOpenAI(  # type: ignore[call-arg]
        model=settings.name,
        base_url=settings.base_url or None,
        api_key=settings.api_key.get_secret_value() or "not-needed",  # type: ignore[arg-type]
        temperature=settings.temperature,
        timeout=settings.timeout_seconds,
        max_tokens=settings.max_tokens,
        max_retries=1,
        stream_usage=True,  # streamed, the last chunk still says what the answer cost
    )
