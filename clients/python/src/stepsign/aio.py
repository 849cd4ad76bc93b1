"""The asyncio client: one connection (one session) that several coroutines may share; their
requests are pipelined and the replies, which come in request order (SPEC §3), resolve them."""
from __future__ import annotations

import asyncio
from dataclasses import replace
from collections import deque
from types import TracebackType
from typing import Any, Optional

from ._protocol import (wait_for_proof_params, JSON, Answerers, ConnectionLost, OnDevice, OnIDV, OnPassword, ProtocolError, Reply,
                        SIGNING_OUTCOMES, Signature, SigningFailed, StepSignError, batch_of, batch_params, decode,
                        encode, signature_of, signing_params)
from .client import DEFAULT_SOCKET


class AsyncClient:
    """A session with stepsignd over asyncio. `await AsyncClient.connect(path)`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: Optional[float]) -> None:
        self._reader = reader
        self._writer = writer
        self.timeout = timeout
        self._next_id = 1
        self._waiting: deque[tuple[int, asyncio.Future[Reply]]] = deque()
        self._lock = asyncio.Lock()
        self._reading = asyncio.get_running_loop().create_task(self._read_replies())

    @classmethod
    async def connect(cls, path: str = DEFAULT_SOCKET, timeout: Optional[float] = 60.0) -> "AsyncClient":
        reader, writer = await asyncio.open_unix_connection(path, limit=16 * 1024 * 1024)
        return cls(reader, writer, timeout)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        await self.close()

    async def close(self) -> None:
        self._reading.cancel()
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass
        self._fail(ConnectionLost("the client was closed"))

    async def _read_replies(self) -> None:
        try:
            while True:
                line = await self._reader.readline()
                if not self._waiting:
                    if not line:
                        return
                    decode(line, None)  # a line of the daemon's own (idle, refused): raises
                    continue
                request_id, future = self._waiting.popleft()
                try:
                    reply = decode(line, request_id)
                except Exception as error:  # noqa: BLE001 - handed to the caller
                    if not future.done():
                        future.set_exception(error)
                    if isinstance(error, (ConnectionLost, ProtocolError)):
                        self._fail(error)
                        return
                    continue
                if not future.done():
                    future.set_result(reply)
        except Exception as error:  # noqa: BLE001
            self._fail(error if isinstance(error, (StepSignError, ConnectionLost)) else ConnectionLost(str(error)))

    def _fail(self, error: Exception) -> None:
        while self._waiting:
            _, future = self._waiting.popleft()
            if not future.done():
                future.set_exception(error)

    # MARK: requests

    async def request(self, op: str, params: Optional[JSON] = None, timeout: Optional[float] = None) -> Reply:
        """Sends `op` (behind any request in flight) and returns its reply, whatever its code;
        `timeout` (seconds) in place of the connection's for this request."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        async with self._lock:
            if self._reading.done():
                raise ConnectionLost("the connection is closed")
            request_id = self._next_id
            self._next_id += 1
            self._waiting.append((request_id, future))
            try:
                self._writer.write(encode(request_id, op, params or {}))
                await self._writer.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise ConnectionLost(str(error)) from error
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout or self.timeout)
        except asyncio.TimeoutError as error:
            raise TimeoutError(f"no reply from stepsignd within {timeout or self.timeout} s") from error

    async def call(self, op: str, params: Optional[JSON] = None) -> Reply:
        """Sends `op`; raises StepSignError unless it was accepted."""
        reply = await self.request(op, params)
        if reply.code != 0:
            raise StepSignError(reply.code, reply.message, op)
        return reply

    # MARK: signing

    async def sign(self, payload: str, reason: str, level: int = 1, type: int = 0, *, user: Optional[str] = None,
                   on_password: Optional[OnPassword] = None, on_device_challenge: Optional[OnDevice] = None,
                   on_idv: Optional[OnIDV] = None, wait_for_approval: float = 3600.0,
                   idempotency_key: Optional[str] = None, witnessed: bool = False, quorum: Optional[int] = None,
             witness_timeout: int = 60) -> Signature:
        """As `Client.sign`. The callbacks are plain functions (they may prompt a person)."""
        answerers = Answerers(on_password, on_device_challenge, on_idv)
        reply = await self.call("authenticateUserAndSignData", signing_params(payload, reason, level, type, user, idempotency_key))
        event = await self._answer(reply, answerers)
        if event["event"] == "onApprovalPending":
            event = await self.wait_for_approval(event["approvalID"], wait_for_approval)
        signature = signature_of(event)
        if witnessed:
            try:
                signature = replace(signature, proof=await self.wait_for_proof(signature.signature_id, quorum, witness_timeout))
            except StepSignError as error:
                error.signature = signature  # the signature stands: ask wait_for_proof again
                raise
        return signature

    async def sign_batch(self, items: list[tuple[str, str]], level: int = 1, type: int = 0, *,
                         user: Optional[str] = None, on_password: Optional[OnPassword] = None,
                         on_device_challenge: Optional[OnDevice] = None, on_idv: Optional[OnIDV] = None,
                         idempotency_key: Optional[str] = None) -> list[Signature]:
        answerers = Answerers(on_password, on_device_challenge, on_idv)
        reply = await self.call("authenticateUserAndSignBatch", batch_params(items, level, type, user, idempotency_key))
        return batch_of(await self._answer(reply, answerers))

    async def wait_for_approval(self, approval_id: str, seconds: float = 3600.0) -> JSON:
        remaining = seconds
        while True:
            wait = int(max(0, min(60, remaining)))
            reply = await self.call("getApproval", {"approvalID": approval_id, "waitSeconds": wait})
            for event in reply.events:
                if event.get("event") == "onAuthenticateUserAndSignData":
                    return event
            remaining -= max(wait, 1)
            if remaining <= 0:
                raise SigningFailed(0, f"request {approval_id} still waits for its approvers")

    async def _answer(self, reply: Reply, answerers: Answerers) -> JSON:
        while True:
            event = reply.last_event
            if event.get("event") in SIGNING_OUTCOMES:
                return event
            op, params = answerers.answer(event)
            reply = await self.call(op, params)

    # MARK: public and admin operations

    async def status(self) -> JSON:
        return await self._result("status")

    async def public_keys(self, format: str = "jwks") -> JSON:
        return await self._result("getPublicKeys", {"format": format})

    async def proof(self, signature_id: str) -> JSON:
        return await self._result("getInclusionProof", {"signatureID": signature_id})

    async def wait_for_proof(self, signature_id: str, quorum: Optional[int] = None, timeout: int = 60) -> str:
        """As `Client.wait_for_proof`."""
        limit = None if self.timeout is None else max(self.timeout, timeout + 30)
        reply = await self.request("waitForProof", wait_for_proof_params(signature_id, quorum, timeout), limit)
        if reply.code != 0:
            raise StepSignError(reply.code, reply.message, "waitForProof")
        if reply.result is None or "proof" not in reply.result:
            raise ProtocolError("waitForProof: no proof")
        return str(reply.result["proof"])

    async def admin(self, name: str, **params: Any) -> JSON:
        return await self._result("admin." + name, params)

    async def _result(self, op: str, params: Optional[JSON] = None) -> JSON:
        result = (await self.call(op, params)).result
        if result is None:
            raise ProtocolError(f"{op}: no result")
        return result
