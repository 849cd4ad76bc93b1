"""The blocking client: one connection (one session, SPEC §3) to stepsignd's Unix socket."""
from __future__ import annotations

import socket
from types import TracebackType
from typing import Any, Optional

from ._protocol import (wait_for_proof_params, with_proof, JSON, Answerers, ConnectionLost, OnDevice, OnIDV, OnPassword, ProtocolError, Reply,
                        SIGNING_OUTCOMES, Signature, SigningFailed, StepSignError, batch_of, batch_params, decode,
                        encode, signature_of, signing_params)

DEFAULT_SOCKET = "/run/stepsign/stepsignd.sock"


class Client:
    """A session with stepsignd. Each request waits for its reply (`timeout` seconds, then
    TimeoutError); `pipeline` sends several before reading their replies, in order."""

    def __init__(self, path: str = DEFAULT_SOCKET, timeout: Optional[float] = 60.0) -> None:
        self.path = path
        self.timeout = timeout
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.settimeout(timeout)
        try:
            self._socket.connect(path)
        except OSError:
            self._socket.close()
            raise
        self._reader = self._socket.makefile("rb")
        self._next_id = 1

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        self._reader.close()
        self._socket.close()

    # MARK: requests

    def request(self, op: str, params: Optional[JSON] = None) -> Reply:
        """Sends `op` and returns its reply, whatever its code."""
        return self.pipeline([(op, params or {})])[0]

    def call(self, op: str, params: Optional[JSON] = None) -> Reply:
        """Sends `op`; raises StepSignError unless it was accepted."""
        reply = self.request(op, params)
        if reply.code != 0:
            raise StepSignError(reply.code, reply.message, op)
        return reply

    def pipeline(self, requests: list[tuple[str, JSON]]) -> list[Reply]:
        """Sends every request at once, then reads their replies (SPEC §3: in request order)."""
        ids = []
        data = b""
        for op, params in requests:
            ids.append(self._next_id)
            data += encode(self._next_id, op, params)
            self._next_id += 1
        try:
            self._socket.sendall(data)
            return [decode(self._reader.readline(), request_id) for request_id in ids]
        except socket.timeout as error:
            raise TimeoutError(f"no reply from stepsignd within {self.timeout} s") from error
        except (BrokenPipeError, ConnectionResetError) as error:
            raise ConnectionLost(str(error)) from error

    # MARK: signing

    def sign(self, payload: str, reason: str, level: int = 1, type: int = 0, *, user: Optional[str] = None,
             on_password: Optional[OnPassword] = None, on_device_challenge: Optional[OnDevice] = None,
             on_idv: Optional[OnIDV] = None, wait_for_approval: float = 3600.0,
             idempotency_key: Optional[str] = None, witnessed: bool = False, quorum: Optional[int] = None,
             witness_timeout: int = 60) -> Signature:
        """Signs `payload`, answering the step-up with the callbacks; a request that needs
        approval by several people is waited for (up to `wait_for_approval` seconds).
        `idempotency_key` (1-64 printable ASCII characters): call again with the same key after
        an error or a lost connection and the daemon answers with the first signature instead of
        signing twice (SPEC §3). `witnessed`: also wait (up to `witness_timeout` seconds) for
        the signature's tlog-proof against a checkpoint `quorum` of the daemon's witnesses (all by
        default) cosigned, in `Signature.proof` (SPEC §5.6; StepSignError 14 when they did not
        in time: the signature stands, in the error's `signature`; ask `wait_for_proof` again)."""
        answerers = Answerers(on_password, on_device_challenge, on_idv)
        event = self._answer(self.call("authenticateUserAndSignData", signing_params(payload, reason, level, type, user, idempotency_key)),
                             answerers)
        if event["event"] == "onApprovalPending":
            event = self.wait_for_approval(event["approvalID"], wait_for_approval)
        signature = signature_of(event)
        if witnessed:
            signature = with_proof(signature, lambda: self.wait_for_proof(signature.signature_id, quorum, witness_timeout))
        return signature

    def sign_batch(self, items: list[tuple[str, str]], level: int = 1, type: int = 0, *, user: Optional[str] = None,
                   on_password: Optional[OnPassword] = None, on_device_challenge: Optional[OnDevice] = None,
                   on_idv: Optional[OnIDV] = None,
                   idempotency_key: Optional[str] = None) -> list[Signature]:
        """Signs every (payload, reason) behind one step-up (SPEC §3.4): all or none."""
        answerers = Answerers(on_password, on_device_challenge, on_idv)
        return batch_of(self._answer(self.call("authenticateUserAndSignBatch", batch_params(items, level, type, user, idempotency_key)),
                                     answerers))

    def wait_for_approval(self, approval_id: str, seconds: float = 3600.0) -> JSON:
        """Asks `getApproval` until the approvers decided; the outcome event (SigningFailed for a
        request still pending after `seconds`)."""
        remaining = seconds
        while True:
            wait = int(max(0, min(60, remaining)))
            reply = self.call("getApproval", {"approvalID": approval_id, "waitSeconds": wait})
            for event in reply.events:
                if event.get("event") == "onAuthenticateUserAndSignData":
                    return event
            remaining -= max(wait, 1)
            if remaining <= 0:
                raise SigningFailed(0, f"request {approval_id} still waits for its approvers")

    def _answer(self, reply: Reply, answerers: Answerers) -> JSON:
        while True:
            event = reply.last_event
            if event.get("event") in SIGNING_OUTCOMES:
                return event
            op, params = answerers.answer(event)
            reply = self.call(op, params)

    def reset(self) -> None:
        """`resetAuthenticateUserAndSignDataState`: cancels a pending signing."""
        self.call("resetAuthenticateUserAndSignDataState")

    # MARK: public operations

    def status(self) -> JSON:
        return self._result("status")

    def public_keys(self, format: str = "jwks") -> JSON:
        return self._result("getPublicKeys", {"format": format})

    def checkpoint(self) -> str:
        return str(self._result("getCheckpoint")["checkpoint"])

    def proof(self, signature_id: str, tree_size: Optional[int] = None) -> JSON:
        """The inclusion proof of a signature in the log (SPEC §5.5): logIndex, treeSize, hashes, checkpoint."""
        params: JSON = {"signatureID": signature_id}
        if tree_size is not None:
            params["treeSize"] = tree_size
        return self._result("getInclusionProof", params)

    def consistency_proof(self, from_size: int, to_size: Optional[int] = None) -> JSON:
        params: JSON = {"fromSize": from_size}
        if to_size is not None:
            params["toSize"] = to_size
        return self._result("getConsistencyProof", params)

    def wait_for_proof(self, signature_id: str, quorum: Optional[int] = None, timeout: int = 60) -> str:
        """`waitForProof` (SPEC §5.6): the C2SP tlog-proof of a signature once a checkpoint
        covering it carries `quorum` witness cosignatures (default: all the daemon's witnesses),
        waiting up to `timeout` seconds (1-300; StepSignError 14 after that: ask again)."""
        previous = self._socket.gettimeout()
        if previous is not None:
            self._socket.settimeout(max(previous, timeout + 30))
        try:
            return str(self._result("waitForProof", wait_for_proof_params(signature_id, quorum, timeout))["proof"])
        finally:
            self._socket.settimeout(previous)

    def signature(self, signature_id: str) -> JSON:
        return self._result("getSignature", {"signatureID": signature_id})

    # MARK: admin operations (admin peers only)

    def admin(self, name: str, **params: Any) -> JSON:
        """`admin.NAME` with `params` (e.g. `admin("addUser", user="bob", password=…)`)."""
        return self._result("admin." + name, params)

    def _result(self, op: str, params: Optional[JSON] = None) -> JSON:
        result = self.call(op, params).result
        if result is None:
            raise ProtocolError(f"{op}: no result")
        return result
