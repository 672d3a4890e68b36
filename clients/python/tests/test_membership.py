"""client.whoami(): GET /api/v1/membership as a typed Membership."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from iq_client import (
    APIError,
    AuthenticationError,
    Client,
    HTTPResponse,
    KeylessProtection,
    Membership,
    MembershipKey,
    MembershipQuota,
    MembershipUser,
)
from iq_client.membership import parse_membership

from fakes import TEST_KEY, FakeTransport, error, make_client, membership, membership_data


def test_whoami_describes_the_key_its_owner_and_its_quota_use() -> None:
    client, transport, _ = make_client(membership(request_id="req_me"), membership=None)
    who = client.whoami()
    assert isinstance(who, Membership)
    assert who.identity == "key" and who.tier == "pro" and who.delay_days == 0
    assert who.user == MembershipUser(id="7", username="kim", role="user")
    assert who.data_cutoff == dt.date(2026, 11, 20) and who.data_cutoff_str == "20261120"
    assert who.indexes == ("Server_Index", "GPU_Index")
    assert who.key == MembershipKey(
        id="key_01",
        name="laptop",
        scopes=("index:read", "quote:read", "calendar:read"),
        index_codes=None,
        expires_at=None,
    )
    assert who.quota == MembershipQuota(
        per_minute=60,
        per_day=10000,
        max_keys=5,
        max_rows=5000,
        used_minute=2,
        used_day=40,
        remaining_minute=58,
        remaining_day=9960,
    )
    assert who.protection is None
    assert who.request_id == "req_me" and client.last_request_id == "req_me"
    assert who.raw["tier"] == "pro"
    [request] = transport.requests
    assert (request.method, request.url) == ("GET", "http://iq.test/api/v1/membership")
    assert request.headers["X-API-Key"] == TEST_KEY
    assert "Content-Type" not in request.headers and request.body == b""


def test_whoami_without_a_key_is_the_visitors_view() -> None:
    transport = FakeTransport(membership(identity="visitor", tier="free", cutoff="20261110"))
    who = Client(base_url="http://iq.test", transport=transport).whoami()
    assert who.identity == "visitor" and who.user is None and who.key is None
    assert who.protection == KeylessProtection(per_minute=300)
    assert who.quota.used_day is None and who.quota.remaining_minute is None
    assert who.data_cutoff == dt.date(2026, 11, 10)
    assert "X-API-Key" not in transport.requests[0].headers


def test_a_key_range_and_expiry_are_typed() -> None:
    data = membership_data()
    data["key"]["index_codes"] = ["GPU_Index", "Hardware_Index"]
    data["key"]["expires_at"] = "2026-12-31T23:59:59.123456789Z"
    who = parse_membership(data)
    assert who.key is not None
    assert who.key.index_codes == ("GPU_Index", "Hardware_Index")
    assert who.key.expires_at == dt.datetime(
        2026, 12, 31, 23, 59, 59, 123456, tzinfo=dt.timezone.utc
    )
    data["key"]["expires_at"] = "2027-01-01T08:00:00+08:00"
    assert parse_membership(data).key.expires_at == dt.datetime(2027, 1, 1, tzinfo=dt.timezone.utc)


def test_fields_newer_than_the_client_are_kept_in_raw() -> None:
    who = parse_membership(membership_data(plan_name="Pro 2027"))
    assert who.raw["plan_name"] == "Pro 2027"


@pytest.mark.parametrize(
    "change",
    [
        {"data_cutoff": "2026-11-20"},
        {"data_cutoff": "20261131"},
        {"identity": None},
        {"indexes": "GPU_Index"},
        {"quota": None},
        {"delay_days": "0"},
        {"delay_days": True},
    ],
)
def test_a_malformed_membership_raises_api_error(change) -> None:
    body = {"request_id": "req_bad", "code": 0, "message": "ok", "data": membership_data(**change)}
    answer = HTTPResponse.build(
        200, {"Content-Type": "application/json"}, json.dumps(body).encode()
    )
    client, _, sleeps = make_client(answer, membership=None)
    with pytest.raises(APIError, match="malformed membership") as caught:
        client.whoami()
    assert caught.value.request_id == "req_bad" and sleeps.calls == []


def test_a_refused_key_raises_as_a_query_would() -> None:
    client, _, sleeps = make_client(error(401, 40103, "key expired"), membership=None)
    with pytest.raises(AuthenticationError) as caught:
        client.whoami()
    assert caught.value.code == 40103 and sleeps.calls == []


def test_whoami_is_retried_like_a_query() -> None:
    client, transport, sleeps = make_client(
        error(502, 50000), membership(), membership=None, jitter=0.0
    )
    assert client.whoami().tier == "pro"
    assert sleeps.calls == [1.0] and len(transport.requests) == 2
