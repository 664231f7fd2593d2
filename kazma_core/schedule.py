"""The clean-up's schedule: APScheduler on the server's event loop, first pass a while after start
(server.first_cleanup_seconds, two minutes), then daily."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.job import Job
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.interval import IntervalTrigger

from kazma_core.maintenance import DAY, Maintenance

PASS_INTERVAL = DAY
JOB_ID = "kazma-maintenance"


def schedule_daily(scheduler: BaseScheduler, job: Callable[[], Awaitable[Any]], start: float, delay: float) -> Job:
    """The first pass `delay` seconds after start (a unix time), then one every PASS_INTERVAL."""
    first = datetime.fromtimestamp(start + delay, tz=UTC)
    trigger = IntervalTrigger(seconds=PASS_INTERVAL, start_date=first, timezone=UTC)
    return scheduler.add_job(
        job, trigger, id=JOB_ID, name="daily clean-up", replace_existing=True,
        coalesce=True, max_instances=1, misfire_grace_time=int(DAY / 2),
    )


def start_scheduler(maintenance: Maintenance) -> AsyncIOScheduler:
    """APScheduler on the running event loop, holding the daily clean-up."""
    scheduler = AsyncIOScheduler(timezone=UTC)
    delay = maintenance.settings.server.first_cleanup_seconds
    schedule_daily(scheduler, maintenance.scheduled_pass, maintenance.now(), delay)
    scheduler.start()
    return scheduler


async def stop_scheduler(scheduler: AsyncIOScheduler, maintenance: Maintenance) -> None:
    if scheduler.running:
        scheduler.shutdown(wait=False)
    await maintenance.stop()
