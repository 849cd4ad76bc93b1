"""SPEC 3.4, approval by several people, through the real CLI and daemon: `stepsign sign` of a
"payment:" request waits for two approvers of group treasury; `stepsign approve` shows each
approver the payload, reason, requester and process before their step-up; the requester's own
approval is refused; a denial ends another request with 121; the signature that comes out
verifies with PyJWT against the published keys and names its approvers; approvers are told
through the notifier (the outbox), without the payload."""
import json
import os
import subprocess
import tempfile
import time

import jwt
import pytest

from conftest import CLI, Daemon, secret_file

PASSWORD = "Harbor-Violet-63"
RULE = """
[[approval]]
reason_prefix = "payment:"
approvers = ["group:treasury"]
required = 2
timeout_seconds = 600
"""


@pytest.fixture(scope="module")
def setup():
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory, extra=RULE)
        admin = daemon.client()
        for user in ("ann", "ben", "cat", "dan"):
            assert admin.call("admin.addUser", user=user, password=PASSWORD)["error"]["code"] == 0
        admin.close()
        yield {"daemon": daemon, "dir": directory, "password": secret_file(directory, "pw", PASSWORD)}
        daemon.stop()


def stepsign(setup, *args, **kwargs):
    return subprocess.run([CLI, "--socket", setup["daemon"].socket, *args], capture_output=True, text=True, timeout=120,
                          **kwargs)


def start_sign(setup, payload, reason):
    """`stepsign sign` of ann in the background: it waits for the approvers."""
    return subprocess.Popen([CLI, "--socket", setup["daemon"].socket, "sign", "--user", "ann", "--reason", reason,
                             "--payload", payload, "--password-file", setup["password"]],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pending_id(setup, approver):
    for _ in range(100):
        listed = stepsign(setup, "approvals", "--user", approver, "--password-file", setup["password"], "--json")
        assert listed.returncode == 0, listed.stderr
        requests = json.loads(listed.stdout)
        if requests:
            return requests[0]
        time.sleep(0.1)
    raise AssertionError("no request appeared")


def test_two_group_members_approve_and_the_requester_gets_the_signature(setup):
    for user in ("ben", "cat", "ann"):
        added = stepsign(setup, "admin", "group", "add", "--group", "treasury", "--user", user)
        assert added.returncode == 0, added.stderr
    listed = stepsign(setup, "admin", "group", "list")
    assert listed.stdout.strip() == "treasury: ann, ben, cat"

    signer = start_sign(setup, "pay 1200 EUR to ACME GmbH", "payment: PO-1187")
    request = pending_id(setup, "ben")
    assert request["payload"] == "pay 1200 EUR to ACME GmbH" and request["requester"] == "ann"
    assert request["peer"]["comm"] == "stepsign" and request["reason"] == "payment: PO-1187"
    approval_id = request["approvalID"]

    # The requester is in the group, but their own approval never counts.
    own = stepsign(setup, "approve", approval_id, "--user", "ann", "--password-file", setup["password"])
    assert own.returncode == 1 and "own approval" in own.stderr, own.stderr

    first = stepsign(setup, "approve", approval_id, "--user", "ben", "--password-file", setup["password"])
    assert first.returncode == 0, first.stderr
    # What is approved is shown before the step-up.
    assert "pay 1200 EUR to ACME GmbH" in first.stderr and "ann asks to sign" in first.stderr
    assert "1 of 2" in first.stdout
    again = stepsign(setup, "approve", approval_id, "--user", "ben", "--password-file", setup["password"])
    assert again.returncode == 1 and "counts once" in again.stderr, again.stderr

    second = stepsign(setup, "approve", approval_id, "--user", "cat", "--password-file", setup["password"])
    assert second.returncode == 0 and "2 of 2, signed" in second.stdout, second.stderr

    out, err = signer.communicate(timeout=120)
    assert signer.returncode == 0, err
    assert f"request {approval_id} waits for 2 approvals" in err
    token = out.strip()
    jwks = json.loads(stepsign(setup, "keys", "export").stdout)
    key = next(jwt.PyJWK(k) for k in jwks["keys"] if k["kid"] == jwt.get_unverified_header(token)["kid"])
    claims = jwt.decode(token, key=key, algorithms=["ES256"])
    assert claims["sub"] == "ann" and claims["payload"] == "pay 1200 EUR to ACME GmbH"
    assert [a["user"] for a in claims["approvals"]] == ["ben", "cat"]
    assert all(a["authenticator"] == "password" and a["authLevel"] == 1 for a in claims["approvals"])

    # The approvers were told, the payload was not in the notice.
    for user in ("ben", "cat"):
        with open(os.path.join(setup["dir"], "state", "outbox", user)) as f:
            notices = [json.loads(line) for line in f]
        notice = next(n for n in notices if n.get("approvalID") == approval_id)
        assert notice["kind"] == "approvalPending" and notice["requester"] == "ann"
        assert "ACME" not in json.dumps(notice)


def test_a_denial_ends_the_request_with_121(setup):
    signer = start_sign(setup, "pay 9 EUR to nobody", "payment: suspicious")
    approval_id = pending_id(setup, "cat")["approvalID"]
    denied = stepsign(setup, "deny", approval_id, "--reason", "no such invoice", "--user", "cat",
                      "--password-file", setup["password"])
    assert denied.returncode == 0 and f"denied {approval_id}" in denied.stdout, denied.stderr
    out, err = signer.communicate(timeout=120)
    assert signer.returncode == 1 and out == "" and "121" in err and "no such invoice" in err


def test_no_wait_prints_the_id_and_get_approval_tells_the_state(setup):
    waited = stepsign(setup, "sign", "--user", "ann", "--reason", "payment: later", "--payload", "pay 3 EUR",
                      "--password-file", setup["password"], "--no-wait")
    assert waited.returncode == 3, waited.stderr
    approval_id = waited.stdout.strip()
    client = setup["daemon"].client()
    reply = client.call("getApproval", approvalID=approval_id)
    assert reply["result"]["state"] == "pending" and reply["events"] == []
    client.close()
    # dan is no approver: the request does not exist for him.
    refused = stepsign(setup, "approve", approval_id, "--user", "dan", "--password-file", setup["password"])
    assert refused.returncode == 1 and "no request for approval" in refused.stderr, refused.stderr
