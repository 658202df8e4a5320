"""Job handlers of the example worker, by job type.

A handler is an async function taking a JobContext. What it returns (any
JSON-native value) becomes the job's result; raising JobError fails the
attempt with a structured error, any other exception fails it with the
exception's class name as error type. A handler stopped by the worker (the
job was cancelled, timed out, or the grace period of a shutdown ended) sees
asyncio.CancelledError at its current await.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable


@dataclass
class JobContext:
    id: str
    type: str
    queue: str
    args: list[Any]
    attempt: int
    meta: dict[str, Any] = field(default_factory=dict)


class JobError(Exception):
    """A structured failure (ojs-core section 8), reported with Fail.

    code overrides the job's retry policy: "retry" (apply it), "discard",
    "dead_letter" or "fail" (give up now).
    """

    def __init__(self, type: str, message: str, *, code: str = "retry", details: dict[str, Any] | None = None):
        super().__init__(message)
        self.type = type
        self.message = message
        self.code = code
        self.details = details or {}


Handler = Callable[[JobContext], Awaitable[Any]]
HANDLERS: dict[str, Handler] = {}


def handler(job_type: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[job_type] = fn
        return fn

    return register


@handler("echo")
async def echo(job: JobContext) -> Any:
    """Returns its arguments."""
    return job.args


@handler("fail")
async def fail(job: JobContext) -> Any:
    """Always fails: args are [error type, message], both optional."""
    error_type = job.args[0] if len(job.args) > 0 else "DemoError"
    message = job.args[1] if len(job.args) > 1 else "failed on purpose"
    raise JobError(error_type, message, details={"attempt": job.attempt})


@handler("flaky")
async def flaky(job: JobContext) -> Any:
    """Fails until attempt args[0] (default 2), then succeeds."""
    succeed_on = int(job.args[0]) if job.args else 2
    if job.attempt < succeed_on:
        raise JobError("FlakyError", f"attempt {job.attempt} fails; attempt {succeed_on} will succeed")
    return {"attempt": job.attempt}


@handler("sleep")
async def sleep(job: JobContext) -> Any:
    """Sleeps args[0] milliseconds; stopping the job interrupts the sleep."""
    ms = float(job.args[0]) if job.args else 1000
    await asyncio.sleep(ms / 1000)
    return {"slept_ms": ms}
