"""The line protocol of SPEC §3: requests, replies, codes, and the step-up challenges a signing
answers, shared by the sync and asyncio clients (which only move the bytes)."""
from __future__ import annotations

import base64
import enum
import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

JSON = dict[str, Any]


class Code(enum.IntEnum):
    """Synchronous `error.code` of SPEC §3.3."""

    ACCEPTED = 0
    INVALID_ARGUMENTS = 4
    SESSION_EXPIRED = 5
    WRONG_STATE = 11
    PERMISSION_DENIED = 13
    BUSY = 14
    INTERNAL_ERROR = 15
    USER_BLOCKED = 148
    SAME_PASSWORD = 167
    NOT_SUPPORTED = 170
    AUTHENTICATION_IN_PROGRESS = 213
    UNSUPPORTED_AUTH_COMBINATION = 214


class Status(enum.IntEnum):
    """Event `status.code` of SPEC §3.3."""

    SUCCESS = 100
    AUTHENTICATION_FAILED = 102
    INVALID_ACTIVATION_CODE = 106
    PASSWORD_EXPIRED_WHILE_UPDATING = 110
    PASSWORD_EXPIRED = 118
    APPROVAL_DENIED = 121
    APPROVAL_EXPIRED = 122
    ATTEMPTS_EXHAUSTED = 153
    PASSWORD_REUSED = 164
    POLICY_VIOLATED = 190


class StepSignError(Exception):
    """The daemon refused a request (its `error.code` is not 0): nothing was changed. From
    `sign(..., witnessed=True)`, `signature` is the signature that was made before its
    witnessed proof was refused (14: not in time; ask again with `wait_for_proof`)."""

    def __init__(self, code: int, message: str, op: str = "") -> None:
        super().__init__(f"{op + ': ' if op else ''}error {code}: {message}")
        self.code = code
        self.message = message
        self.op = op
        self.signature: Optional["Signature"] = None

    @property
    def retryable(self) -> bool:
        """15 (nothing was signed or changed) and 14 (busy) may succeed when sent again."""
        return self.code in (Code.INTERNAL_ERROR, Code.BUSY)


class SigningFailed(Exception):
    """A signing ended without a signature: its event's status (102, 118, 121, 122, 153)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"not signed: {status} {message}")
        self.status = status
        self.message = message


class ConnectionLost(Exception):
    """The connection broke before the reply came (the daemon stopped or closed it)."""


class ProtocolError(Exception):
    """A reply that is not what SPEC §3 says (not JSON, another id, no event)."""


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Reply:
    """One reply line: `error` (code 0 = accepted), `events`, `result`."""

    id: Any
    code: int
    message: str
    events: list[JSON]
    result: Optional[JSON]

    @property
    def last_event(self) -> JSON:
        if not self.events:
            raise ProtocolError(f"no event in the reply (error {self.code}: {self.message})")
        return self.events[-1]


def encode(request_id: int, op: str, params: JSON) -> bytes:
    return (json.dumps({"id": request_id, "op": op, **params}, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def decode(line: bytes, expected_id: Any) -> Reply:
    if not line:
        raise ConnectionLost("the daemon closed the connection")
    try:
        value = json.loads(line)
    except ValueError as error:
        raise ProtocolError(f"a reply that is not JSON: {line[:200]!r}") from error
    if not isinstance(value, dict) or not isinstance(value.get("error"), dict):
        raise ProtocolError(f"a reply without error: {line[:200]!r}")
    refusal = value["error"]
    reply = Reply(value.get("id"), int(refusal.get("code", -1)), str(refusal.get("message", "")),
                  list(value.get("events") or []), value.get("result"))
    if reply.id is None and reply.code != 0:
        # A line the daemon sends on its own before closing: idle (5), refused (13), busy (14).
        raise StepSignError(reply.code, reply.message)
    if reply.id != expected_id:
        raise ProtocolError(f"reply {reply.id!r} to request {expected_id!r}")
    return reply


@dataclass(frozen=True)
class PasswordChallenge:
    """`getPassword` of a step-up (challenge mode 12): whose, how many attempts are left, and
    the status of the last answer (102 after a wrong one)."""

    user: str
    attempts_left: int
    status: int
    manifest: Optional[JSON] = None


@dataclass(frozen=True)
class DeviceChallenge:
    """`getLDASignature`: the exact bytes a device key must sign (ES256, raw r‖s), the keys
    that may, and the batch's manifest if it is one."""

    user: str
    challenge: bytes
    device_keys: list[str]
    attempts_left: int
    status: int
    manifest: Optional[JSON] = None


@dataclass(frozen=True)
class IDVChallenge:
    """`getIDVBiometric`: the nonce and the operation text an IDV assertion must bind (`txn` =
    base64url(SHA-256(challenge)))."""

    user: str
    nonce: str
    challenge: bytes
    attempts_left: int
    status: int
    manifest: Optional[JSON] = None


OnPassword = Callable[[PasswordChallenge], str]
OnDevice = Callable[[DeviceChallenge], tuple[str, bytes]]
OnIDV = Callable[[IDVChallenge], str]


@dataclass(frozen=True)
class Signature:
    """One signature: the JWS, its ID and log index, and every detail the daemon sent; with
    `sign(..., witnessed=True)`, its C2SP tlog-proof against a checkpoint witnesses cosigned."""

    jws: str
    signature_id: str
    log_index: Optional[int]
    details: JSON = field(repr=False)
    proof: Optional[str] = field(default=None, repr=False)

    @staticmethod
    def of(details: JSON) -> "Signature":
        return Signature(details["payloadSignature"], details["dataSignatureID"], details.get("logIndex"), details)


@dataclass(frozen=True)
class Answerers:
    """The callbacks that answer a step-up."""

    on_password: Optional[OnPassword]
    on_device_challenge: Optional[OnDevice]
    on_idv: Optional[OnIDV]

    def answer(self, event: JSON) -> tuple[str, JSON]:
        """The request (op, parameters) that answers the challenge `event`."""
        name = event.get("event")
        status = int((event.get("status") or {}).get("code", 100))
        manifest = event.get("manifest")
        if name == "getPassword":
            if self.on_password is None:
                raise ProtocolError("the daemon asks for a password: give on_password")
            challenge = PasswordChallenge(event["user"], int(event.get("attemptsLeft", 0)), status, manifest)
            return "setPassword", {"password": self.on_password(challenge), "challengeMode": 12}
        if name == "getLDASignature":
            if self.on_device_challenge is None:
                if self.on_password is not None:  # the SDK's fallback: answer with the password
                    challenge = PasswordChallenge(event["user"], int(event.get("attemptsLeft", 0)), status, manifest)
                    return "setPassword", {"password": self.on_password(challenge), "challengeMode": 12}
                raise ProtocolError("the daemon asks for a device signature: give on_device_challenge")
            device = DeviceChallenge(event["user"], b64url_decode(event["challenge"]), list(event["deviceKeys"]),
                                     int(event.get("attemptsLeft", 0)), status, manifest)
            kid, signature = self.on_device_challenge(device)
            return "setLDASignature", {"deviceKeyId": kid, "signature": b64url_encode(signature)}
        if name == "getIDVBiometric":
            if self.on_idv is None:
                raise ProtocolError("the daemon asks for an IDV assertion: give on_idv")
            idv = IDVChallenge(event["user"], event["nonce"], b64url_decode(event["challenge"]),
                               int(event.get("attemptsLeft", 0)), status, manifest)
            return "setIDVBiometricAssertion", {"assertion": self.on_idv(idv)}
        raise ProtocolError(f"an event this client cannot answer: {name}")


SIGNING_OUTCOMES = {"onAuthenticateUserAndSignData", "onAuthenticateUserAndSignBatch", "onApprovalPending"}


def signing_params(payload: str, reason: str, level: int, type_: int, user: Optional[str],
                   idempotency_key: Optional[str] = None) -> JSON:
    params: JSON = {"payload": payload, "reason": reason, "authLevel": level, "authenticatorType": type_}
    if user is not None:
        params["user"] = user
    if idempotency_key is not None:
        params["idempotencyKey"] = idempotency_key
    return params


def batch_params(items: list[tuple[str, str]], level: int, type_: int, user: Optional[str],
                 idempotency_key: Optional[str] = None) -> JSON:
    params: JSON = {"items": [{"payload": p, "reason": r} for p, r in items], "authLevel": level,
                    "authenticatorType": type_}
    if user is not None:
        params["user"] = user
    if idempotency_key is not None:
        params["idempotencyKey"] = idempotency_key
    return params


def signature_of(event: JSON) -> Signature:
    """The signature of an `onAuthenticateUserAndSignData` event, or SigningFailed."""
    status = event.get("status") or {}
    if int(status.get("code", 0)) != Status.SUCCESS:
        raise SigningFailed(int(status.get("code", 0)), str(status.get("message", "")))
    return Signature.of(event["details"])


def batch_of(event: JSON) -> list[Signature]:
    """The signatures of an `onAuthenticateUserAndSignBatch` event, in order, or SigningFailed."""
    status = event.get("status") or {}
    if int(status.get("code", 0)) != Status.SUCCESS:
        raise SigningFailed(int(status.get("code", 0)), str(status.get("message", "")))
    return [Signature.of(details) for details in event["signatures"]]


def with_proof(signature: Signature, wait: Callable[[], str]) -> Signature:
    """`signature` with the proof `wait` returns; a refusal carries the signature, which stands."""
    try:
        return replace(signature, proof=wait())
    except StepSignError as error:
        error.signature = signature
        raise


def wait_for_proof_params(signature_id: str, quorum: Optional[int], timeout: int) -> JSON:
    """The parameters of `waitForProof` (SPEC §5.6)."""
    params: JSON = {"signatureID": signature_id, "timeoutSeconds": timeout}
    if quorum is not None:
        params["quorum"] = quorum
    return params
