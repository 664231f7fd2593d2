"""Settings: defaults in config/kazma.toml, then a user file, the environment and kazma.db overrides.

Priority, highest first: explicit arguments (command-line flags), overrides stored in
kazma.db (what the Settings page edits), environment (``KAZMA_`` prefix, nesting with
``__``), the user file (``KAZMA_CONFIG`` or ``~/.config/kazma/kazma.toml``), and the
defaults file. Each field says whether it is read live or when the server starts.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from kazma_core.errors import SettingsError
from kazma_core.stores.legacy import convert_legacy
from kazma_core.stores.postgres import read_rows as pg_rows
from kazma_core.stores.sqlite import read_rows as sqlite_rows

# config/kazma.toml, shipped inside the package through the kazma_core/defaults.toml link.
DEFAULTS_FILE = Path(__file__).resolve().parent / "defaults.toml"
USER_FILE = Path("~/.config/kazma/kazma.toml").expanduser()

LIVE: JsonDict = {"live": True}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TimeTravelSettings(_Section):
    enabled: bool = Field(description="Save steps at all")
    max_snapshots: int = Field(ge=1, le=100_000, description="Newest steps kept per conversation")
    max_global_snapshots: int = Field(ge=1, le=10_000_000, description="Newest steps kept in the whole database")
    max_snapshot_bytes: int = Field(
        ge=4096, le=1 << 30, description="Most a step may add (its new messages and own fields) and still be stored whole"
    )
    max_thread_bytes: int = Field(ge=1 << 16, le=1 << 40, description="Bytes of steps kept per conversation beyond its messages now")
    max_total_bytes: int = Field(
        ge=1 << 20, le=1 << 44, description="Bytes of steps kept in the whole database beyond the chats' messages now"
    )
    max_per_turn: int = Field(ge=2, le=10_000, description="Steps kept per turn: its first and its newest")
    auto_maintain: bool = Field(description="Run the daily clean-up", json_schema_extra=LIVE)
    retention_days: int = Field(ge=1, le=36_500, description="The clean-up deletes steps older than this", json_schema_extra=LIVE)
    undo_seconds: int = Field(
        ge=1, le=7 * 86_400, description="How long a restore can be undone (until the chat's next turn at most)"
    )


class ModelSettings(_Section):
    provider: Literal["offline", "openai", "anthropic"]
    name: str = Field(min_length=1)
    base_url: str
    api_key: SecretStr
    temperature: float = Field(ge=0.0, le=2.0)
    timeout_seconds: float = Field(gt=0, le=3600)
    max_tokens: int = Field(ge=1, le=200_000)
    context_tokens: int = Field(
        ge=1_000, le=10_000_000,
        description="Most of a chat the model is given at each call, in estimated tokens: its newest messages that fit",
    )
    piece_seconds: float = Field(
        ge=0, le=5, description="The offline model: pause between two words of its answer as it streams (0: the answer in one piece)"
    )


class ServerSettings(_Section):
    host: str = Field(min_length=1)
    port: int = Field(ge=1, le=65_535)
    public_url: str
    first_cleanup_seconds: int = Field(ge=0, le=86_400, description="The first daily clean-up runs this long after start")
    access_log: bool = Field(description="One line per request in the server's output")
    # Replicas sharing a PostgreSQL database: the chat apps' leader (kazma_core/replicas/leader.py).
    leader_seconds: int = Field(ge=2, le=3_600, description="The chat apps' leader row expires this long after its last renewal")
    leader_renew_seconds: int = Field(ge=1, le=3_600, description="The leader renews its row this often (shorter than leader_seconds)")
    leader_check_seconds: int = Field(ge=1, le=3_600, description="The other replicas look at the leader's row this often")

    @field_validator("leader_renew_seconds")
    @classmethod
    def _renewed_before_it_expires(cls, renew: int, info: ValidationInfo) -> int:
        # A renewal as slow as the expiry would let another replica lead while this one still does.
        leader = info.data.get("leader_seconds")
        if leader is not None and renew >= leader:
            raise PydanticCustomError("renew_not_shorter", "", {"leader": leader})
        return renew


class AgentSettings(_Section):
    max_iterations: int = Field(ge=1, le=10_000)
    approval_ttl_seconds: int = Field(ge=5, le=7 * 86_400, json_schema_extra=LIVE)
    lease_seconds: int = Field(ge=2, le=3_600)
    workspace_dir: str = Field(min_length=1)


class LimitsSettings(_Section):
    max_body_bytes: int = Field(ge=1024, le=1 << 30, description="Largest request body the server reads")
    max_message_chars: int = Field(ge=1, le=1_000_000, description="Longest message a person may send")
    max_tool_result_chars: int = Field(ge=256, le=1 << 26, description="Longest tool result the model is given; a longer one is cut")
    user_quota_bytes: int = Field(
        ge=1 << 16, le=1 << 44, description="Storage each user may use: conversations, saved steps and files",
        json_schema_extra=LIVE,
    )


class SecuritySettings(_Section):
    session_hours: int = Field(ge=1, le=24 * 366, description="A web sign-in lasts this long")
    trust_proxy: bool = Field(description="Believe X-Forwarded-Proto from the reverse proxy in front")


class HistorySettings(_Section):
    checkpoints_per_chat: int = Field(ge=2, le=100_000, description="Chat step history kept per chat")


class DatabaseSettings(_Section):
    url: SecretStr = Field(description="PostgreSQL for every store (postgresql://user:password@host:5432/db); empty: SQLite files")


class TelegramSettings(_Section):
    token: SecretStr
    base_url: str = Field(min_length=1)
    mode: Literal["polling", "webhook"]
    webhook_secret: SecretStr
    webhook_url: str
    webhook_listen: str = Field(min_length=1)
    webhook_port: int = Field(ge=1, le=65_535)

    @property
    def configured(self) -> bool:
        """Whether `kazma serve` runs this bot (its SDK is imported only then)."""
        return bool(self.token.get_secret_value())


class DiscordSettings(_Section):
    token: SecretStr
    api_base: str = Field(min_length=1)
    gateway_url: str = Field(min_length=1)

    @property
    def configured(self) -> bool:
        """Whether `kazma serve` runs this bot (its SDK is imported only then)."""
        return bool(self.token.get_secret_value().strip())


class SlackSettings(_Section):
    bot_token: SecretStr
    signing_secret: SecretStr
    app_token: SecretStr
    api_url: str = Field(min_length=1)

    @property
    def configured(self) -> bool:
        """Whether `kazma serve` runs this bot (its SDK is imported only then)."""
        return bool(self.bot_token.get_secret_value())


class _Overrides(PydanticBaseSettingsSource):
    """A source holding a nested dict (the kazma.db overrides)."""

    def __init__(self, settings_cls: type[BaseSettings], values: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._values = values

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self._values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._values)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KAZMA_", env_nested_delimiter="__", extra="forbid")

    data_dir: Path
    database: DatabaseSettings
    server: ServerSettings
    model: ModelSettings
    agent: AgentSettings
    history: HistorySettings
    limits: LimitsSettings
    security: SecuritySettings
    time_travel: TimeTravelSettings
    telegram: TelegramSettings
    discord: DiscordSettings
    slack: SlackSettings

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        user_file = Path(os.environ["KAZMA_CONFIG"]) if os.environ.get("KAZMA_CONFIG") else USER_FILE
        return (
            init_settings,
            _Overrides(settings_cls, _STORED.get("values", {})),
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=user_file),
            TomlConfigSettingsSource(settings_cls, toml_file=DEFAULTS_FILE),
        )

    # Paths: every file derives from data_dir.
    @property
    def kazma_db(self) -> Path:
        return self.data_dir / "kazma.db"

    @property
    def snapshots_db(self) -> Path:
        return self.data_dir / "snapshots.db"

    @property
    def audit_db(self) -> Path:
        return self.data_dir / "time_travel_audit.db"

    @property
    def workspace(self) -> Path:
        return self.data_dir / self.agent.workspace_dir

    def files_of(self, user_id: str) -> Path:
        """One user's own folder of the workspace: the file tool writes only there."""
        return self.workspace / user_id

    @property
    def base_url(self) -> str:
        return self.server.public_url.rstrip("/") or f"http://{self.server.host}:{self.server.port}"


# The overrides read from kazma.db while a Settings object is being built.
_STORED: dict[str, dict[str, Any]] = {}


def is_live(dotted: str) -> bool:
    """Whether a setting (``section.name``) is read live rather than at start."""
    field = _field(dotted.split("."))
    extra = field.json_schema_extra if field is not None else None
    return isinstance(extra, dict) and bool(extra.get("live"))


def setting_names() -> list[str]:
    """Every editable setting as ``section.name``."""
    names: list[str] = []
    for section, info in Settings.model_fields.items():
        ann = info.annotation
        # Where the database is cannot be stored in it: read at start, from the file or the environment.
        if isinstance(ann, type) and issubclass(ann, BaseModel) and section != "database":
            names.extend(f"{section}.{name}" for name in ann.model_fields)
    return names


def _field(loc: list[str] | tuple[Any, ...]) -> Any:
    model: Any = Settings
    field = None
    for part in loc:
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        field = fields[part]
        model = field.annotation
    return field


def _allowed(loc: tuple[Any, ...]) -> tuple[str, dict[str, Any]]:
    """What the setting allows, as its refusal says it: the sentence's suffix and its parameters."""
    field = _field(loc)
    if field is None:
        return "", {}
    low = high = None
    for meta in field.metadata:
        low = getattr(meta, "ge", None) if getattr(meta, "ge", None) is not None else low
        low = getattr(meta, "gt", None) if getattr(meta, "gt", None) is not None else low
        high = getattr(meta, "le", None) if getattr(meta, "le", None) is not None else high
    if low is not None and high is not None:
        return "_range", {"low": low, "high": high}
    ann = getattr(field.annotation, "__args__", None)
    if ann:
        return "_choices", {"allowed": [str(a) for a in ann]}
    if field.annotation is bool:
        return "_bool", {}
    return "", {}


def refused_setting(problem: str, name: str, value: Any = None, /, **params: Any) -> SettingsError:
    """A setting's value refused: `problem` names the sentence (errors.<problem>, with the suffix of what
    the setting allows), `value` (the value refused; none for a whole section) is shown after its name."""
    suffix, allowed = _allowed(tuple(name.split(".")))
    shown = name if value is None or isinstance(value, dict) else f"{name} = {value!r}"
    return SettingsError(message_id=problem + suffix, setting=shown, **params, **allowed)


# pydantic's kinds of refusal, by the catalogue sentence that says what the setting expects: its own
# English ("Input should be greater than or equal to 1") never reaches the owner, in either language.
_PROBLEMS = {
    "int_type": "setting_not_integer", "int_parsing": "setting_not_integer", "int_from_float": "setting_not_integer",
    "float_type": "setting_not_number", "float_parsing": "setting_not_number",
    "bool_type": "setting_switch", "bool_parsing": "setting_switch",
    "string_type": "setting_not_text", "string_unicode": "setting_not_text", "string_too_short": "setting_empty",
    "greater_than_equal": "setting_out_of_range", "greater_than": "setting_out_of_range",
    "less_than_equal": "setting_out_of_range", "less_than": "setting_out_of_range",
    "literal_error": "setting_not_a_choice", "enum": "setting_not_a_choice",
    "dict_type": "setting_not_section", "model_type": "setting_not_section", "model_attributes_type": "setting_not_section",
    "renew_not_shorter": "setting_renew_not_shorter",  # ServerSettings: the leader's renewal against its expiry
}
_OURS = {"renew_not_shorter"}


def refused_value(name: str, first: Any) -> SettingsError:
    """The refusal of one value pydantic found wrong (the first of its errors): which setting, and
    what it expects, in the catalogue's words (`setting_invalid` for a kind not named above)."""
    # pydantic's own refusals carry no parameter of ours; a refusal of ours (`_renewed_before_it_expires`) its ctx.
    params = first.get("ctx") or {} if first["type"] in _OURS else {}
    return refused_setting(_PROBLEMS.get(first["type"], "setting_invalid"), name, first.get("input"), **params)


def _describe(err: ValidationError) -> SettingsError:
    first = err.errors()[0]
    name = ".".join(str(p) for p in first["loc"])
    if first["type"] == "extra_forbidden":
        return SettingsError(message_id="setting_unknown", setting=name)
    return refused_value(name, first)


def _stored_rows(kazma_db: Path, url: str) -> list[tuple[str, str]]:
    # Not there yet (a new database), unreadable or unreachable: none; opening the stores says which.
    if url:
        return pg_rows(url, "SELECT key, value FROM kazma.settings_overrides")
    return sqlite_rows(kazma_db, "SELECT key, value FROM settings_overrides")


def read_overrides(kazma_db: Path, url: str = "") -> dict[str, Any]:
    """The settings overrides stored in kazma.db (or PostgreSQL with `url`), as a nested dict."""
    rows = _stored_rows(kazma_db, url)
    nested: dict[str, Any] = {}
    for key, value in rows:
        section, _, name = key.partition(".")
        if name:
            nested.setdefault(section, {})[name] = orjson.loads(value)
    return nested


def load_settings(**explicit: Any) -> Settings:
    """Build the settings from every source; raise SettingsError with one line on a bad value."""
    explicit = {k: v for k, v in explicit.items() if v is not None}
    try:
        first = Settings(**explicit)
        _STORED["values"] = read_overrides(first.data_dir / "kazma.db", first.database.url.get_secret_value())
        try:
            settings = Settings(**explicit)
        finally:
            _STORED.clear()
    except ValidationError as err:
        raise _describe(err) from None
    settings.data_dir = settings.data_dir.expanduser().resolve()
    return settings


def validate_override(dotted: str, value: Any) -> Any:
    """Check one override (``section.name``) against its field; return the parsed value."""
    section, _, name = dotted.partition(".")
    model = Settings.model_fields.get(section)
    cls = model.annotation if model else None
    if not (isinstance(cls, type) and issubclass(cls, _Section) and name in cls.model_fields):
        raise SettingsError(message_id="setting_unknown_pick", setting=dotted, names=setting_names())
    if isinstance(value, bool) and cls.model_fields[name].annotation is not bool:
        raise refused_setting("setting_not_bool", dotted, value)
    try:
        return _check(cls, name, value)
    except ValidationError as err:
        raise refused_value(dotted, err.errors()[0]) from None


def _check(cls: type[_Section], name: str, value: Any) -> Any:
    from pydantic import create_model

    fields: dict[str, Any] = {name: (cls.model_fields[name].annotation, cls.model_fields[name])}
    probe = create_model("Probe", **fields)
    return getattr(probe(**{name: value}), name)


def prepare_data_dir(settings: Settings) -> None:
    """The data folder, writable, in today's layout: what every command does before opening a store
    (a folder of the first layout has its checkpoints.db converted into kazma.db first). Here, not
    in the core: `kazma serve` prepares the folder and signs its owner in before the graph is imported."""
    ensure_data_dir(settings)
    convert_legacy(settings.data_dir)


def ensure_data_dir(settings: Settings) -> None:
    """Create the data folder and prove it is writable, or raise one clear line."""
    path = settings.data_dir
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
        settings.workspace.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SettingsError(message_id="data_dir_unwritable", path=str(path), reason=err.strerror or "") from None
