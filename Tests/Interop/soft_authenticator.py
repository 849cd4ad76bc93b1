"""A software FIDO2 security key for the tests, reached by libfido2 through the CLI's
`--fido2-device unix:PATH` transport: CTAPHID over a Unix stream socket, each HID report 64
bytes in both directions (what libfido2 writes to and reads from a hidraw device, without the
report ID byte).

It speaks what libfido2 asks of a CTAP 2.0 key: CTAPHID INIT, PING, CBOR (with a KEEPALIVE
"user presence needed" before each credential or assertion, as a key waiting for a touch
sends), CANCEL and ERROR; CTAP2 getInfo, makeCredential (ES256, packed self attestation),
getAssertion (UP and UV flags, a signature counter) and clientPIN (PIN protocol one:
getRetries, getKeyAgreement, getPinToken). The CBOR and the authenticator data are
python-fido2's; the keys, ECDH, AES and HMAC are `cryptography`'s.

`uv` says how the key verifies its user: "builtin" (a biometric: it honours the uv option),
"pin" (a PIN only: the uv option is refused as a CTAP 2.0 key refuses it, and a pinAuth made
with the PIN's token verifies the user), or "none" (it says it verifies but never does: UV is
never set in what it signs, the attack the daemon's UV check stops)."""
import hashlib
import hmac
import os
import socket
import struct
import threading

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.cose import ES256
from fido2.ctap2.pin import PinProtocolV1
from fido2.hid import CAPABILITY, CTAPHID
from fido2.webauthn import AttestedCredentialData, AuthenticatorData

REPORT = 64
BROADCAST = 0xFFFFFFFF
AAGUID = bytes.fromhex("5374657053696700736f667420666964")  # "StepSig\0soft fid"
FLAG = AuthenticatorData.FLAG
# CTAP2 status codes (CTAP 2.0 §6.3).
OK, INVALID_CBOR, UNSUPPORTED_ALGORITHM, UNSUPPORTED_OPTION = 0x00, 0x12, 0x26, 0x2B
NO_CREDENTIALS, PIN_INVALID, PIN_AUTH_INVALID, PIN_REQUIRED = 0x2E, 0x31, 0x33, 0x36
INVALID_COMMAND = 0x01
KEEPALIVE_UP_NEEDED = 2


class SoftAuthenticator:
    """Serves CTAPHID on a Unix socket at `path` until closed; one connection at a time, as
    one CLI process opens the key once."""

    def __init__(self, path, uv="builtin", pin=None):
        assert uv in ("builtin", "pin", "none")
        self.path, self.uv, self.pin = path, uv, pin
        self.credentials = {}  # credential ID -> (P-256 private key, RP ID hash)
        self.counter = 0
        self.requests = []  # the CTAP2 commands received, by name, in order
        self.counters = []  # the signature counter of each assertion made
        self.pin_token = None
        self.retries = 8
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def device(self):
        """The `--fido2-device` value naming this key."""
        return "unix:" + self.path

    def close(self):
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(timeout=10)
        os.unlink(self.path)

    # CTAPHID framing.

    def _serve(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                try:
                    self._session(connection)
                except (ConnectionError, EOFError):
                    pass

    def _session(self, connection):
        next_cid = 1
        while True:
            cid, command, payload = self._receive(connection)
            if command == CTAPHID.INIT:
                assert len(payload) == 8, payload
                new_cid, next_cid = next_cid, next_cid + 1
                # nonce, channel, CTAPHID version 2, device version 1.0.0, capabilities.
                self._send(connection, cid, CTAPHID.INIT, payload + struct.pack(">IBBBBB", new_cid, 2, 1, 0, 0,
                                                                                CAPABILITY.CBOR | CAPABILITY.NMSG))
            elif cid == BROADCAST:
                self._send(connection, cid, CTAPHID.ERROR, bytes([0x0B]))  # ERR_INVALID_CHANNEL
            elif command == CTAPHID.PING:
                self._send(connection, cid, CTAPHID.PING, payload)
            elif command == CTAPHID.CANCEL:
                pass
            elif command == CTAPHID.CBOR and payload:
                if payload[0] in (0x01, 0x02):
                    self._send(connection, cid, CTAPHID.KEEPALIVE, bytes([KEEPALIVE_UP_NEEDED]))
                self._send(connection, cid, CTAPHID.CBOR, self._cbor(payload[0], payload[1:]))
            else:
                self._send(connection, cid, CTAPHID.ERROR, bytes([INVALID_COMMAND]))

    @staticmethod
    def _read_report(connection):
        report = b""
        while len(report) < REPORT:
            chunk = connection.recv(REPORT - len(report))
            if not chunk:
                raise EOFError
            report += chunk
        return report

    def _receive(self, connection):
        """One CTAPHID message: an initialization packet, then continuation packets in order."""
        report = self._read_report(connection)
        cid, command, length = struct.unpack(">IBH", report[:7])
        assert command & 0x80, "a message must start with an initialization packet"
        data, sequence = report[7:], 0
        while len(data) < length:
            report = self._read_report(connection)
            assert struct.unpack(">I", report[:4])[0] == cid and report[4] == sequence, report
            data += report[5:]
            sequence += 1
        return cid, command & 0x7F, data[:length]

    @staticmethod
    def _send(connection, cid, command, data):
        first = struct.pack(">IBH", cid, 0x80 | command, len(data)) + data[:REPORT - 7]
        reports = [first]
        rest, sequence = data[REPORT - 7:], 0
        while rest:
            reports.append(struct.pack(">IB", cid, sequence) + rest[:REPORT - 5])
            rest, sequence = rest[REPORT - 5:], sequence + 1
        connection.sendall(b"".join(report.ljust(REPORT, b"\0") for report in reports))

    # CTAP2.

    def _cbor(self, command, body):
        names = {0x01: "makeCredential", 0x02: "getAssertion", 0x04: "getInfo", 0x06: "clientPIN"}
        self.requests.append(names.get(command, hex(command)))
        try:
            request = cbor.decode(body) if body else {}
        except Exception:
            return bytes([INVALID_CBOR])
        handler = {0x01: self._make_credential, 0x02: self._get_assertion, 0x04: self._get_info,
                   0x06: self._client_pin}.get(command)
        if handler is None:
            return bytes([INVALID_COMMAND])
        status, response = handler(request)
        return bytes([status]) + (cbor.encode(response) if response is not None else b"")

    def _get_info(self, _):
        options = {"rk": False, "up": True, "plat": False}
        if self.uv in ("builtin", "none"):
            options["uv"] = True
        if self.pin is not None:
            options["clientPin"] = True
        return OK, {1: ["FIDO_2_0"], 3: AAGUID, 4: options, 5: 1200, 6: [1]}

    def _verified(self, request, client_data_hash, pin_auth_key, pin_protocol_key, options_key):
        """(status, UV flag) for a request: how this key verifies its user, if asked to."""
        if pin_auth_key in request:
            if request.get(pin_protocol_key) != 1 or self.pin_token is None:
                return PIN_AUTH_INVALID, False
            expected = hmac.new(self.pin_token, client_data_hash, hashlib.sha256).digest()[:16]
            if not hmac.compare_digest(expected, request[pin_auth_key]):
                return PIN_AUTH_INVALID, False
            return OK, True
        if request.get(options_key, {}).get("uv"):
            if self.uv == "pin":
                return UNSUPPORTED_OPTION, False
            return OK, self.uv == "builtin"
        if self.pin is not None:
            return PIN_REQUIRED, False
        return OK, False

    def _make_credential(self, request):
        client_data_hash, rp, params = request[1], request[2], request[4]
        if not any(p.get("alg") == -7 and p.get("type") == "public-key" for p in params):
            return UNSUPPORTED_ALGORITHM, None
        status, verified = self._verified(request, client_data_hash, 8, 9, 7)
        if status != OK:
            return status, None
        key = ec.generate_private_key(ec.SECP256R1())
        credential_id = os.urandom(32)
        rp_id_hash = hashlib.sha256(rp["id"].encode()).digest()
        self.credentials[credential_id] = (key, rp_id_hash)
        attested = AttestedCredentialData.create(AAGUID, credential_id, ES256.from_cryptography_key(key.public_key()))
        flags = FLAG.UP | FLAG.AT | (FLAG.UV if verified else 0)
        auth_data = bytes(AuthenticatorData.create(rp_id_hash, flags, self.counter, attested))
        signature = key.sign(auth_data + client_data_hash, ec.ECDSA(hashes.SHA256()))
        return OK, {1: "packed", 2: auth_data, 3: {"alg": -7, "sig": signature}}

    def _get_assertion(self, request):
        rp_id, client_data_hash = request[1], request[2]
        rp_id_hash = hashlib.sha256(rp_id.encode()).digest()
        allowed = [entry["id"] for entry in request.get(3, [])]
        found = [cid for cid in allowed if cid in self.credentials and self.credentials[cid][1] == rp_id_hash]
        if not found:
            return NO_CREDENTIALS, None
        status, verified = self._verified(request, client_data_hash, 6, 7, 5)
        if status != OK:
            return status, None
        key, _ = self.credentials[found[0]]
        self.counter += 1
        self.counters.append(self.counter)
        flags = FLAG.UP | (FLAG.UV if verified else 0)
        auth_data = bytes(AuthenticatorData.create(rp_id_hash, flags, self.counter))
        signature = key.sign(auth_data + client_data_hash, ec.ECDSA(hashes.SHA256()))
        return OK, {1: {"type": "public-key", "id": found[0]}, 2: auth_data, 3: signature}

    def _client_pin(self, request):
        if self.pin is None or request.get(1) != 1:
            return UNSUPPORTED_OPTION, None
        protocol = PinProtocolV1()
        subcommand = request.get(2)
        if subcommand == 1:  # getRetries
            return OK, {3: self.retries}
        if subcommand == 2:  # getKeyAgreement
            self.agreement = ec.generate_private_key(ec.SECP256R1())
            numbers = self.agreement.public_key().public_numbers()
            return OK, {1: {1: 2, 3: -25, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}}
        if subcommand == 5:  # getPinToken
            peer = request[3]
            point = ec.EllipticCurvePublicNumbers(int.from_bytes(peer[-2], "big"), int.from_bytes(peer[-3], "big"),
                                                  ec.SECP256R1()).public_key()
            shared = protocol.kdf(self.agreement.exchange(ec.ECDH(), point))
            pin_hash = protocol.decrypt(shared, request[6])
            if not hmac.compare_digest(pin_hash, hashlib.sha256(self.pin.encode()).digest()[:16]):
                self.retries -= 1
                return PIN_INVALID, None
            self.retries = 8
            self.pin_token = os.urandom(32)
            return OK, {2: protocol.encrypt(shared, self.pin_token)}
        return UNSUPPORTED_OPTION, None
