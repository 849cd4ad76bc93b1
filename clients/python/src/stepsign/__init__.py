"""A client of stepsignd (SPEC §3): `Client` (blocking) and `AsyncClient` (asyncio)."""
from ._protocol import (Code, ConnectionLost, DeviceChallenge, IDVChallenge, PasswordChallenge, ProtocolError, Reply,
                        Signature, SigningFailed, Status, StepSignError)
from .aio import AsyncClient
from .client import DEFAULT_SOCKET, Client

__all__ = [
    "AsyncClient", "Client", "Code", "ConnectionLost", "DEFAULT_SOCKET", "DeviceChallenge", "IDVChallenge",
    "PasswordChallenge", "ProtocolError", "Reply", "Signature", "SigningFailed", "Status", "StepSignError",
]
