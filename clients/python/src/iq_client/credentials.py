"""Checks of the client's configuration: the API key and the service address.

A key has the service's shape (docs/api.md, "Identities and the back office"):
``iq_`` followed by 40 base62 characters (the last 6 a checksum of the first 34, which
only the service checks). A key of another shape is refused here, before any request:
the service would refuse it too (401 / 40102), and a stray newline or space in a header
makes the HTTP library raise an error that quotes the whole header value.

No message built here contains a key; at most its first 9 characters (the
``key_hint`` the service itself shows in key listings), and only when those are
harmless letters and digits.
"""

from __future__ import annotations

import re
from typing import Optional
from urllib.parse import urlsplit

from .errors import AuthenticationError

__all__ = ["KEY_HINT_LEN", "check_api_key", "check_base_url", "key_hint"]

#: How many leading characters of a key may be shown (the service's ``key_hint``).
KEY_HINT_LEN = 9
_KEY_BODY_LEN = 40
_KEY = re.compile(r"iq_[0-9A-Za-z]{%d}" % _KEY_BODY_LEN)
_HINT = re.compile(r"iq_[0-9A-Za-z]{%d}" % (KEY_HINT_LEN - 3))
_UNPRINTABLE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def key_hint(key: Optional[str]) -> Optional[str]:
    """The first 9 characters of ``key`` followed by ``...``, or ``"<hidden>"`` when
    they are not a plain ``iq_`` prefix (so nothing unusual is ever echoed)."""
    if key is None:
        return None
    head = key[:KEY_HINT_LEN]
    return f"{head}..." if _HINT.fullmatch(head) else "<hidden>"


def check_api_key(key: str, source: str) -> str:
    """``key`` if it has the shape of a key; otherwise raises.

    Args:
        key: the key as given (never stripped or otherwise changed).
        source: where it came from, for the message (``"api_key"``, ``"IQ_API_KEY"``).

    Raises:
        AuthenticationError: code 40102 (what the service would answer), no
            ``request_id`` nor ``http_status``; the message never contains the key.
    """
    if not isinstance(key, str):
        raise TypeError(f"{source} must be a string, not {type(key).__name__}")
    if key.strip() == "":
        problem = "is empty; leave it unset to query as the anonymous visitor"
    elif _UNPRINTABLE.search(key):
        problem = (
            "contains whitespace or control characters (a trailing newline from a "
            "file or a copy-paste?)"
        )
    elif not _KEY.fullmatch(key):
        problem = (
            f"does not look like an API key: expected 'iq_' followed by {_KEY_BODY_LEN} "
            f"letters and digits ({3 + _KEY_BODY_LEN} characters), got {len(key)} characters"
        )
    else:
        return key
    # The hint only for a long text: a short one would be shown nearly whole.
    hint = key_hint(key) if len(key) > 2 * KEY_HINT_LEN else None
    shown = f" ({hint})" if hint and hint != "<hidden>" else ""
    raise AuthenticationError(f"the API key from {source}{shown} {problem}", code=40102)


def check_base_url(base_url: str) -> str:
    """``base_url`` if it is an absolute ``http``/``https`` URL with a host.

    Raises:
        ValueError: for anything else (``localhost:8080`` without a scheme, say).
    """
    if not isinstance(base_url, str):
        raise TypeError(f"base_url must be a string, not {type(base_url).__name__}")
    problem: Optional[str] = None
    if _UNPRINTABLE.search(base_url):
        problem = "contains whitespace or control characters"
    else:
        parts = urlsplit(base_url)
        try:
            _ = parts.port  # raises on a port that is not a number
        except ValueError:
            problem = "has an invalid port"
        if problem is None and parts.scheme not in ("http", "https"):
            problem = "needs an http:// or https:// scheme"
        elif problem is None and not parts.hostname:
            problem = "has no host"
    if problem is not None:
        raise ValueError(f"base_url {base_url!r} {problem}; expected e.g. 'http://127.0.0.1:8080'")
    return base_url
