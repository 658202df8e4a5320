#!/usr/bin/env python3
"""An OJS worker in Python: grpcio (asyncio) on stubs generated from proto/.

It registers, keeps the Beat stream (listing every held job, obeying the
quiet and terminate directives and the cancellations the server pushes),
consumes the Fetch stream, settles each job with Ack or Fail, and on SIGTERM
or SIGINT drains within a grace period, fails what is left with error type
"shutdown", deregisters and exits 0 (a second signal cuts the drain short).
SIGTSTP quiets it, SIGCONT resumes it.

Every event is one JSON object per line on stdout, e.g.
{"event": "acked", "job_id": "...", ...}.

TLS, mTLS and a bearer token come from OJS_TLS_CA, OJS_TLS_CERT, OJS_TLS_KEY
and OJS_TOKEN (channel.py).

Generate the stubs first (from the repository root):
    node scripts/polyglot-stubs.mjs python
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import time
import traceback
import uuid
from dataclasses import dataclass
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gen"))

import grpc  # noqa: E402
from google.protobuf import json_format, struct_pb2, timestamp_pb2  # noqa: E402

try:
    from ojs.server.v1 import job_pb2  # noqa: E402
    from ojs.server.v1 import worker_service_pb2 as pb  # noqa: E402
    from ojs.server.v1 import worker_service_pb2_grpc as pb_grpc  # noqa: E402
except ImportError:
    sys.exit("The gRPC stubs are missing: run `node scripts/polyglot-stubs.mjs python` in the repository root.")

from channel import SettingError, open_channel  # noqa: E402
from handlers import HANDLERS, JobContext, JobError  # noqa: E402

RUNNING, QUIET, TERMINATE = pb.WORKER_STATE_RUNNING, pb.WORKER_STATE_QUIET, pb.WORKER_STATE_TERMINATE
STATE_NAMES = {RUNNING: "running", QUIET: "quiet", TERMINATE: "terminate"}
# worker-protocol.md 2.3: never backward from terminate.
NEXT_STATES = {RUNNING: {QUIET, TERMINATE}, QUIET: {RUNNING, TERMINATE}, TERMINATE: set()}
HANDLER_CODES = {
    "retry": job_pb2.HANDLER_CODE_RETRY,
    "discard": job_pb2.HANDLER_CODE_DISCARD,
    "dead_letter": job_pb2.HANDLER_CODE_DEAD_LETTER,
    "fail": job_pb2.HANDLER_CODE_FAIL,
}

RPC_TIMEOUT = 10.0  # seconds, for every unary call
RETRY_DELAY = 1.0  # seconds before reopening a failed stream or registering again


def log(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, "ts": round(time.time(), 3), **fields}), flush=True)


def parse_duration(text: str) -> float:
    """Seconds in "25s", "500ms", "2m", "1h" or a bare number of seconds (the server's format)."""
    for unit, seconds in (("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * seconds
    return float(text)


def uuid7() -> str:
    """A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version, variant, random bits."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    value = value & ~(0xF << 76) | 0x7 << 76  # version 7
    value = value & ~(0x3 << 62) | 0x2 << 62  # variant 10
    return str(uuid.UUID(int=value))


def load_config(argv: list[str]) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(description="OJS example worker (Python)")
    parser.add_argument("--server", default=env("OJS_SERVER", "127.0.0.1:9090"), help="host:port of the OJS server")
    parser.add_argument("--queues", default=env("OJS_QUEUES", "default"), help="comma-separated, highest priority first")
    parser.add_argument("--concurrency", type=int, default=int(env("OJS_CONCURRENCY", "10")))
    parser.add_argument(
        "--grace-period", type=parse_duration, default=env("OJS_SHUTDOWN_GRACE_PERIOD", "25s"),
        help="how long a shutdown waits for held jobs (default 25s)",
    )
    parser.add_argument("--labels", default=env("OJS_LABELS", ""), help="comma-separated")
    parser.add_argument("--worker-id", default=env("OJS_WORKER_ID") or f"py-{uuid7()}")
    parser.add_argument("--verbose", action="store_true", default=env("OJS_VERBOSE", "") in ("1", "true"), help="log every beat")
    config = parser.parse_args(argv)
    config.queues = [q for q in config.queues.split(",") if q]
    config.labels = [label for label in config.labels.split(",") if label]
    if config.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    return config


def to_value(data: Any) -> struct_pb2.Value:
    value = struct_pb2.Value()
    json_format.ParseDict(data, value)
    return value


def error_from_exception(error: BaseException) -> job_pb2.JobError:
    if isinstance(error, JobError):
        details = struct_pb2.Struct()
        json_format.ParseDict(error.details, details)
        return job_pb2.JobError(type=error.type, message=error.message, code=HANDLER_CODES[error.code], details=details)
    frames = reversed(traceback.extract_tb(error.__traceback__))  # innermost first
    return job_pb2.JobError(
        type=type(error).__name__,
        message=str(error),
        backtrace=[f"{f.filename}:{f.lineno} in {f.name}" for f in frames],
    )


@dataclass
class HeldJob:
    delivery: pb.Delivery
    handler: asyncio.Task
    # Why the worker stopped the handler: "cancelled", "timeout", "shutdown" or "lost".
    stop_reason: str | None = None
    # True once an Ack or Fail for the job is on its way.
    settling: bool = False
    process: asyncio.Task | None = None


class Worker:
    def __init__(self, config: argparse.Namespace, channel: grpc.aio.Channel):
        self.config = config
        self.stub = pb_grpc.WorkerServiceStub(channel)
        self.started_at = timestamp_pb2.Timestamp()
        self.started_at.GetCurrentTime()
        self.state = RUNNING
        self.held: dict[str, HeldJob] = {}
        self.heartbeat_interval = 5.0
        self.sequence = 0
        # A state the worker chose itself (signal) is unknown to the server
        # until a beat reporting it is answered; replies before that still
        # carry the old state and must not move the worker back. None: the
        # server knows; 0: not sent yet; n: sent in beat n.
        self.pending_report: int | None = None
        self.beat_now = asyncio.Event()
        self.running = asyncio.Event()
        self.running.set()
        self.terminating = asyncio.Event()
        self.forced = asyncio.Event()
        self.settled = asyncio.Event()

    # -- lifecycle -----------------------------------------------------------

    async def run(self) -> None:
        if not await self.register():
            return
        beat = asyncio.create_task(self.beat_loop())
        fetch = asyncio.create_task(self.fetch_loop())
        for task in (beat, fetch):
            task.add_done_callback(self.on_loop_done)
        await self.terminating.wait()
        await self.drain()
        fetch.cancel()
        await self.fail_leftovers()
        beat.cancel()
        await self.deregister()

    async def register(self) -> bool:
        """Registers, retrying while the server is unreachable; False if a shutdown came first."""
        request = pb.RegisterRequest(
            worker_id=self.config.worker_id,
            hostname=socket.gethostname(),
            pid=os.getpid(),
            queues=self.config.queues,
            concurrency=self.config.concurrency,
            labels=self.config.labels,
            started_at=self.started_at,
        )
        while not self.terminating.is_set():
            try:
                reply = await self.stub.Register(request, timeout=RPC_TIMEOUT)
            except grpc.aio.AioRpcError as error:
                if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                log("register_retry", code=error.code().name, message=error.details())
                await asyncio.sleep(RETRY_DELAY)
                continue
            self.heartbeat_interval = reply.heartbeat_interval.ToTimedelta().total_seconds() or 5.0
            log(
                "registered", worker_id=self.config.worker_id, queues=self.config.queues,
                concurrency=self.config.concurrency, heartbeat_interval_ms=round(self.heartbeat_interval * 1000),
            )
            return True
        return False

    def move_to(self, state: int, cause: str) -> None:
        """Moves to a state if the lifecycle allows it; cause is "directive", "signal" or "error"."""
        if state == self.state or state not in NEXT_STATES[self.state]:
            return
        log("state", state=STATE_NAMES[state], previous=STATE_NAMES[self.state], cause=cause)
        self.state = state
        if cause != "directive":
            self.pending_report = 0
        if state == RUNNING:
            self.running.set()
        else:
            self.running.clear()
        if state == TERMINATE:
            self.terminating.set()
        # Report at once: leaving running makes the server end the Fetch stream.
        self.beat_now.set()

    def on_loop_done(self, task: asyncio.Task) -> None:
        """A stream loop only ends by cancellation; if a bug ends it, shut down rather than limp on."""
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            log("fatal", error=f"{type(error).__name__}: {error}")
            self.move_to(TERMINATE, "error")

    def on_shutdown_signal(self, name: str) -> None:
        log("signal", signal=name)
        if self.state == TERMINATE:
            self.forced.set()  # a second signal: stop waiting for held jobs
        else:
            self.move_to(TERMINATE, "signal")

    async def drain(self) -> None:
        """Waits for held jobs to finish, up to the grace period (or a second signal)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.grace_period
        log("draining", active_jobs=len(self.held), grace_period_ms=round(self.config.grace_period * 1000))
        while True:
            self.settled.clear()
            remaining = deadline - loop.time()
            if not self.held or self.forced.is_set() or remaining <= 0:
                return
            await wait_first(self.settled, self.forced, timeout=remaining)

    async def fail_leftovers(self) -> None:
        """Fails the jobs still running after the drain with error type "shutdown" (retryable)."""
        settling = [h.process for h in self.held.values() if h.settling and h.process is not None]
        leftovers = [h for h in self.held.values() if not h.settling and h.stop_reason in (None, "timeout")]
        if leftovers:
            for held in leftovers:
                held.stop_reason, held.settling = "shutdown", True
            message = f"the worker shut down before the job finished (grace period {self.config.grace_period:g}s)"
            request = pb.FailBatchRequest(
                worker_id=self.config.worker_id,
                failures=[
                    pb.Failure(job_id=h.delivery.job.id, lease_token=h.delivery.lease_token,
                               error=job_pb2.JobError(type="shutdown", message=message))
                    for h in leftovers
                ],
            )
            try:
                reply = await self.stub.FailBatch(request, timeout=RPC_TIMEOUT)
                for result in reply.results:
                    if result.ok:
                        log("failed", job_id=result.job_id, error_type="shutdown", state=job_state_name(result.state))
                    else:
                        log("settle_refused", job_id=result.job_id, call="FailBatch", code=result.error_code, message=result.error_message)
            except grpc.aio.AioRpcError as error:
                # Deregister (or, failing that, the server's timeouts) releases them.
                log("settle_error", call="FailBatch", code=error.code().name, message=error.details())
            for held in leftovers:
                held.handler.cancel()
        # Let Acks and Fails already on their way complete.
        if settling:
            await asyncio.wait(settling, timeout=RPC_TIMEOUT)

    async def deregister(self) -> None:
        try:
            reply = await self.stub.Deregister(pb.DeregisterRequest(worker_id=self.config.worker_id), timeout=RPC_TIMEOUT)
            log("deregistered", released_job_ids=list(reply.released_job_ids))
        except grpc.aio.AioRpcError as error:
            log("deregister_error", code=error.code().name, message=error.details())

    # -- Beat ----------------------------------------------------------------

    async def beat_loop(self) -> None:
        while True:
            if self.pending_report is not None:
                self.pending_report = 0  # a beat lost with the old stream: report again
            try:
                async for reply in self.stub.Beat(self.beats()):
                    self.on_beat_reply(reply)
                log("beat_error", code="OK", message="the server ended the Beat stream")
            except grpc.aio.AioRpcError as error:
                log("beat_error", code=error.code().name, message=error.details())
                if error.code() == grpc.StatusCode.NOT_FOUND and not self.terminating.is_set():
                    await self.register_again()
                    continue
            await asyncio.sleep(RETRY_DELAY)

    async def beats(self):
        """Beat requests: one per heartbeat interval, and one at once when beat_now is set."""
        while True:
            self.sequence += 1
            if self.pending_report == 0:
                self.pending_report = self.sequence
            # Every held job, or the server takes it back; not those it already took.
            job_ids = [job_id for job_id, h in self.held.items() if h.stop_reason in (None, "timeout")]
            yield pb.BeatRequest(
                worker_id=self.config.worker_id, state=self.state,
                active_jobs=len(job_ids), active_job_ids=job_ids, sequence=self.sequence,
            )
            try:
                await asyncio.wait_for(self.beat_now.wait(), self.heartbeat_interval)
            except TimeoutError:
                pass
            self.beat_now.clear()

    def on_beat_reply(self, reply: pb.BeatResponse) -> None:
        if self.pending_report and reply.in_reply_to >= self.pending_report:
            self.pending_report = None
        if self.pending_report is None and reply.state != pb.WORKER_STATE_UNSPECIFIED:
            self.move_to(reply.state, "directive")
        for job_id in reply.cancelled_job_ids:
            self.stop(job_id, "cancelled")
        for job_id in reply.timed_out_job_ids:
            self.stop(job_id, "timeout")
        # Taken back by the server (it runs again elsewhere): stop, answer nothing.
        for job_id in reply.reclaimed_job_ids:
            self.stop(job_id, "lost")
        if self.config.verbose and reply.in_reply_to:
            log("beat", sequence=reply.in_reply_to, state=STATE_NAMES[self.state],
                server_state=STATE_NAMES.get(reply.state, "unspecified"), active_jobs=len(self.held))

    async def register_again(self) -> None:
        """The server forgot this worker (declared it dead): it already took its jobs back."""
        for job_id in list(self.held):
            self.stop(job_id, "lost")
        await self.register()

    # -- Fetch ---------------------------------------------------------------

    async def fetch_loop(self) -> None:
        while True:
            await self.running.wait()
            try:
                async for message in self.stub.Fetch(pb.FetchRequest(worker_id=self.config.worker_id)):
                    for delivery in message.deliveries:  # none in a keepalive
                        self.start(delivery)
                # The server ends the stream when the worker leaves running (or
                # is deregistered): reopen only while running.
                log("fetch_ended", state=STATE_NAMES[self.state])
            except grpc.aio.AioRpcError as error:
                # FAILED_PRECONDITION: the server already sees this worker as
                # quiet or terminating; the Beat stream will say so too.
                log("fetch_error", code=error.code().name, message=error.details())
                await asyncio.sleep(RETRY_DELAY)

    # -- Jobs ----------------------------------------------------------------

    def start(self, delivery: pb.Delivery) -> None:
        job = delivery.job
        running = self.running_handlers() + 1
        if running > self.config.concurrency:
            log("over_capacity", job_id=job.id, running=running)  # the server never sends more than that
        context = JobContext(
            id=job.id, type=job.type, queue=job.queue, attempt=job.attempt,
            args=[json_format.MessageToDict(arg) for arg in job.args],
            meta=json_format.MessageToDict(job.meta),
        )
        handler = HANDLERS.get(job.type)
        coroutine = handler(context) if handler else unknown_type(job.type)
        held = HeldJob(delivery, asyncio.create_task(coroutine))
        self.held[job.id] = held
        held.process = asyncio.create_task(self.process(held))
        log("started", job_id=job.id, type=job.type, queue=job.queue, attempt=job.attempt, running=running)

    def running_handlers(self) -> int:
        """Handlers still working on a job the server counts against this worker's concurrency."""
        return sum(1 for h in self.held.values() if not h.settling and h.stop_reason in (None, "timeout"))

    def stop(self, job_id: str, reason: str) -> None:
        held = self.held.get(job_id)
        if held is None or held.stop_reason is not None or held.settling:
            return
        held.stop_reason = reason
        log("stopping", job_id=job_id, reason=reason)
        held.handler.cancel()

    async def process(self, held: HeldJob) -> None:
        """Awaits the handler, then settles the job as its outcome and stop reason say."""
        job = held.delivery.job
        try:
            error: job_pb2.JobError | None = None
            result = None
            try:
                result = to_value(await held.handler)
            except asyncio.CancelledError as exception:
                if not held.handler.cancelled():
                    raise  # this task itself is being cancelled
                if held.stop_reason == "timeout":
                    error = job_pb2.JobError(type="timeout", message="stopped: the job's execution timeout passed")
                else:
                    error = error_from_exception(exception)
            except Exception as exception:  # noqa: BLE001 - any handler failure fails the attempt
                error = error_from_exception(exception)
            if held.stop_reason in ("cancelled", "lost"):
                log(held.stop_reason, job_id=job.id)  # the server refuses any answer now
                return
            if held.stop_reason == "shutdown":
                return  # failed by fail_leftovers
            held.settling = True
            if error is None:
                await self.settle(held, "Ack", pb.AckRequest(
                    worker_id=self.config.worker_id, job_id=job.id, lease_token=held.delivery.lease_token, result=result))
            else:
                await self.settle(held, "Fail", pb.FailRequest(
                    worker_id=self.config.worker_id, job_id=job.id, lease_token=held.delivery.lease_token, error=error))
        finally:
            self.held.pop(job.id, None)
            self.settled.set()

    async def settle(self, held: HeldJob, call: str, request: Any) -> None:
        job = held.delivery.job
        method = getattr(self.stub, call)
        for attempt in range(4):
            try:
                reply = await method(request, timeout=RPC_TIMEOUT)
                break
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.UNAVAILABLE and attempt < 3:
                    await asyncio.sleep(0.2 * 2**attempt)
                    continue
                # FAILED_PRECONDITION: the lease is gone (cancelled, reclaimed).
                log("settle_refused", job_id=job.id, call=call, code=error.code().name, message=error.details())
                return
        if call == "Ack":
            log("acked", job_id=job.id, type=job.type, attempt=job.attempt)
        else:
            log("failed", job_id=job.id, type=job.type, attempt=job.attempt, error_type=request.error.type,
                state=job_state_name(reply.state))


async def unknown_type(job_type: str) -> Any:
    raise JobError("unknown_job_type", f"this worker has no handler for {job_type!r}", code="fail")


def job_state_name(state: int) -> str:
    return job_pb2.JobState.Name(state).removeprefix("JOB_STATE_").lower()


async def wait_first(*events: asyncio.Event, timeout: float) -> None:
    waiters = [asyncio.create_task(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


async def main(config: argparse.Namespace) -> int:
    try:
        channel = open_channel(config.server)
    except SettingError as error:
        log("fatal", code="INVALID_SETTING", message=str(error))
        return 2
    async with channel:
        worker = Worker(config, channel)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.on_shutdown_signal, sig.name)
        loop.add_signal_handler(signal.SIGTSTP, worker.move_to, QUIET, "signal")
        loop.add_signal_handler(signal.SIGCONT, worker.move_to, RUNNING, "signal")
        try:
            await worker.run()
        # e.g. Register refused: ALREADY_EXISTS, INVALID_ARGUMENT, UNAUTHENTICATED (a wrong token)
        except grpc.aio.AioRpcError as error:
            log("fatal", code=error.code().name, message=error.details())
            return 1
    log("exited")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(load_config(sys.argv[1:]))))
