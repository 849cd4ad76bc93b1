"""SPEC 5.6 "a signature with its witnessed proof", with real processes on the loopback: three
`stepsign-witness serve`, a real stepsignd, and a long-running `stepsign-witnessd` whose timed
rounds are five minutes apart, so that every proof here was asked for by `waitForProof` at
once. `stepsign sign --witnessed --quorum 2 --proof-out FILE` and the Python client's
`sign(..., witnessed=True)` hand back a proof that `stepsign-verify --witness … --quorum K`
accepts; waiters that arrive together share one checkpoint; a dead witness within the quorum's
slack changes nothing, and beyond it `waitForProof` answers 14 at its timeout."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import CLI, Client, Daemon, PASSWORD, USER, secret_file
from test_witnesses import VERIFY, WITNESSD, Witness, daemon_config, free_port, run

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python", "src"))
import stepsign  # noqa: E402  (the client of this checkout)

HOSTS = ("127.0.0.6", "127.0.0.7", "127.0.0.8")
# Timed rounds so far apart that no test waits for one.
INTERVAL = 300


@pytest.fixture(scope="module")
def setup():
    with tempfile.TemporaryDirectory() as directory:
        witnesses = [Witness(directory, f"witness.test/p{n + 1}", host, free_port(host), []) for n, host in enumerate(HOSTS)]
        os.mkdir(os.path.join(directory, "a"))
        daemon = Daemon(os.path.join(directory, "a"), extra=daemon_config(witnesses, 2))
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        log_keys = run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout.split()
        for w in witnesses:
            w.start(log_keys)
        keys = os.path.join(directory, "keys.json")
        with open(keys, "w") as f:
            f.write(run(CLI, "--socket", daemon.socket, "keys", "export").stdout)
        pusher_log = open(os.path.join(directory, "witnessd.log"), "wb")
        pusher = subprocess.Popen([WITNESSD, "--config", os.path.join(daemon.directory, "stepsignd.toml"),
                                   "--socket", daemon.socket, "--interval", str(INTERVAL), "--timeout", "5",
                                   "--log-level", "info"], stdout=pusher_log, stderr=pusher_log)
        state = {"directory": directory, "daemon": daemon, "client": client, "witnesses": witnesses,
                 "log_keys": log_keys, "keys": keys, "pusher": pusher}
        try:
            yield state
        finally:
            pusher.terminate()
            assert pusher.wait(timeout=30) == 0
            pusher_log.close()
            if os.environ.get("STEPSIGN_SHOW_PUSHER_LOG"):
                print(open(os.path.join(directory, "witnessd.log")).read())
            client.close()
            daemon.stop()
            for w in witnesses:
                w.stop()


def sign_witnessed(setup, payload, *extra):
    """`stepsign sign --witnessed … --proof-out FILE`: (exit status, JWS, proof file, stderr, seconds)."""
    directory, daemon = setup["directory"], setup["daemon"]
    password = secret_file(directory, "pw", PASSWORD)
    proof = os.path.join(directory, payload.replace(" ", "_") + ".tlog-proof")
    started = time.monotonic()
    result = run(CLI, "--socket", daemon.socket, "sign", "--user", USER, "--reason", "witnessed", "--payload", payload,
                 "--password-file", password, "--witnessed", "--proof-out", proof, *extra)
    return result.returncode, result.stdout.strip(), proof, result.stderr, time.monotonic() - started


def verify(setup, jws, proof, quorum, witnesses=None):
    jws_file = proof + ".jws"
    with open(jws_file, "w") as f:
        f.write(jws)
    log_key = [a for k in setup["log_keys"] for a in ("--log-key", k)]
    witness_args = [a for w in (witnesses or setup["witnesses"]) for a in ("--witness", w.vkey)]
    return run(VERIFY, "--keys", setup["keys"], "--json", "--proof", proof, *log_key, *witness_args,
               "--quorum", str(quorum), jws_file)


def test_sign_witnessed_writes_a_proof_two_of_three_witnesses_cosigned(setup):
    code, jws, proof, errors, seconds = sign_witnessed(setup, "release 1", "--quorum", "2")
    assert code == 0, errors
    # Asked at once: the pusher's next timed round is minutes away.
    assert seconds < 60, seconds
    verified = verify(setup, jws, proof, 2)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert len(json.loads(verified.stdout)["cosignedBy"]) >= 2
    # The proof is the signature's: another entry's JWS does not verify with it.
    other = sign_level_0_details(setup["client"], 1)[0]["payloadSignature"]
    assert verify(setup, other, proof, 2).returncode == 1


def test_the_python_client_waits_for_every_witness_by_default(setup):
    with stepsign.Client(setup["daemon"].socket) as client:
        signature = client.sign("release 2", "witnessed", user=USER, on_password=lambda challenge: PASSWORD,
                                witnessed=True)
    assert signature.proof and signature.proof.startswith("c2sp.org/tlog-proof@v1\nindex ")
    proof = os.path.join(setup["directory"], "python.tlog-proof")
    with open(proof, "w") as f:
        f.write(signature.proof)
    verified = verify(setup, signature.jws, proof, 3)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert sorted(json.loads(verified.stdout)["cosignedBy"]) == sorted(w.name for w in setup["witnesses"])


def test_the_async_client_waits_for_a_quorum_too(setup):
    import asyncio

    async def main():
        client = await stepsign.AsyncClient.connect(setup["daemon"].socket)
        try:
            return await client.sign("release async", "witnessed", user=USER, on_password=lambda challenge: PASSWORD,
                                     witnessed=True, quorum=2)
        finally:
            await client.close()

    signature = asyncio.run(main())
    proof = os.path.join(setup["directory"], "async.tlog-proof")
    with open(proof, "w") as f:
        f.write(signature.proof)
    verified = verify(setup, signature.jws, proof, 2)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_waiters_that_arrive_together_share_one_checkpoint(setup):
    signatures = [signed for signed in sign_level_0_with_ids(setup["client"], 4)]
    size = int(setup["client"].call("getCheckpoint")["result"]["checkpoint"].split("\n")[1])
    replies = [None] * len(signatures)

    def wait(n, signature_id):
        client = Client(setup["daemon"].socket)
        try:
            replies[n] = client.call("waitForProof", signatureID=signature_id, quorum=3, timeoutSeconds=60)
        finally:
            client.close()

    threads = [threading.Thread(target=wait, args=(n, sid)) for n, sid in enumerate(signatures)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    sizes = set()
    for reply in replies:
        assert reply and reply["error"]["code"] == 0, reply
        text = reply["result"]["proof"]
        checkpoint = text.split("\n\n", 1)[1]
        sizes.add(int(checkpoint.split("\n")[1]))
    # One checkpoint (the head when they asked) carries every waiter's proof.
    assert sizes == {size}, sizes


def sign_level_0_details(client, count):
    """`count` level-0 signatures of USER; their details."""
    details = []
    for n in range(count):
        reply = client.call("authenticateUserAndSignData", payload=f"level 0 {n}", reason="witnessed", authLevel=0,
                            authenticatorType=0, user=USER)
        event = reply["events"][-1]
        assert event["status"]["code"] == 100, reply
        details.append(event["details"])
    return details


def sign_level_0_with_ids(client, count):
    return [d["dataSignatureID"] for d in sign_level_0_details(client, count)]


def test_waitForProof_is_refused_for_bad_parameters_and_other_peers_signatures(setup):
    client = setup["client"]
    signature_id = sign_level_0_with_ids(client, 1)[0]
    assert client.call("waitForProof", signatureID=signature_id, quorum=4)["error"]["code"] == 4
    assert client.call("waitForProof", signatureID=signature_id, timeoutSeconds=301)["error"]["code"] == 4
    assert client.call("waitForProof", signatureID="no-such-id", timeoutSeconds=1)["error"]["code"] == 4
    assert client.call("waitForProof", signatureID=signature_id, extra=1)["error"]["code"] == 4


def kill(witness):
    """A witness that dies (SIGKILL: a graceful stop waits out the pusher's idle connections)."""
    witness.process.kill()
    witness.process.wait(timeout=30)


def test_a_dead_witness_within_the_quorum_slack_changes_nothing(setup):
    kill(setup["witnesses"][2])
    code, jws, proof, errors, seconds = sign_witnessed(setup, "release 3", "--quorum", "2")
    assert code == 0, errors
    assert seconds < 60, seconds
    verified = verify(setup, jws, proof, 2)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert setup["witnesses"][2].name not in json.loads(verified.stdout)["cosignedBy"]


def test_beyond_the_slack_waitForProof_answers_14_at_its_timeout(setup):
    kill(setup["witnesses"][1])
    client = setup["client"]
    signature_id = sign_level_0_with_ids(client, 1)[0]
    started = time.monotonic()
    reply = client.call("waitForProof", signatureID=signature_id, quorum=2, timeoutSeconds=3)
    seconds = time.monotonic() - started
    assert reply["error"]["code"] == 14, reply
    assert 3 <= seconds < 20, seconds
    # A quorum the one live witness meets is still served.
    reply = client.call("waitForProof", signatureID=signature_id, quorum=1, timeoutSeconds=30)
    assert reply["error"]["code"] == 0, reply
    # The Python client raises 14 with the signature it made (which stands).
    with stepsign.Client(setup["daemon"].socket) as python_client:
        with pytest.raises(stepsign.StepSignError) as refused:
            python_client.sign("release 5", "witnessed", user=USER, on_password=lambda challenge: PASSWORD,
                               witnessed=True, quorum=2, witness_timeout=2)
        assert refused.value.code == 14 and refused.value.signature is not None
        assert python_client.signature(refused.value.signature.signature_id)["signatureID"] == refused.value.signature.signature_id
    # The CLI prints the signature, then says why there is no proof, and exits 1.
    code, jws, proof, errors, _ = sign_witnessed(setup, "release 4", "--quorum", "2", "--witness-timeout", "3")
    assert code == 1 and jws.count(".") == 2, (code, jws, errors)
    assert "error 14" in errors and not os.path.exists(proof), errors
