"""Python client for the AI-hardware price index service.

Query results come back as pandas DataFrames (dates ``datetime64``, points and prices
``float64``, or exact ``Decimal`` on request); parameters and fields of the six
datasets are known offline; bad queries are refused before they are sent; errors are
typed exceptions carrying ``code``, ``message``, ``request_id`` and ``http_status``.
``as_of=`` asks for the data as it stood at an instant, ``updated_since=`` for what
changed since, :meth:`Client.revisions` for what was corrected, ``format="csv"`` for
the service's own CSV, ``format="arrow"`` for a ``pyarrow.Table`` (with pyarrow
installed, DataFrames are read from Arrow pages too), and :meth:`Client.sync` keeps a
local copy of a dataset up to date. :meth:`Client.events` follows what is published
and revised as it happens, and :func:`verify_webhook` checks a webhook message.

    >>> from iq_client import Client
    >>> client = Client()  # key from IQ_API_KEY, service from IQ_BASE_URL
    >>> df = client.index_daily(index_code="GPU_Index", start_date="20260101")
    >>> client.whoami().data_cutoff      # what the service says this key sees
    datetime.date(2026, 11, 20)

:class:`AsyncClient` is the same for asyncio (``pip install 'iq-client[async]'``);
:mod:`iq_client.tushare` runs code written for Tushare Pro with two lines changed.
"""

from typing import Any

from . import errors
from ._version import __version__
from .aio import AsyncClient
from .arrow import ArrowPage
from .catalogue import Dataset, Field, Param, list_datasets, list_fields, list_params
from .client import Client
from .dataset_sync import SyncError, SyncResult, read_synced

# Re-exported (`as`) for type checkers; __all__ takes them from errors.__all__ below.
from .errors import (
    APIError as APIError,
)
from .errors import (
    AuthenticationError as AuthenticationError,
)
from .errors import (
    Conflict as Conflict,
)
from .errors import (
    InvalidRequest as InvalidRequest,
)
from .errors import (
    IQError as IQError,
)
from .errors import (
    LocalValidationError as LocalValidationError,
)
from .errors import (
    NotFound as NotFound,
)
from .errors import (
    PermissionDenied as PermissionDenied,
)
from .errors import (
    QuotaExhausted as QuotaExhausted,
)
from .errors import (
    RateLimited as RateLimited,
)
from .errors import (
    ServerError as ServerError,
)
from .errors import (
    TransportError as TransportError,
)
from .events import Event, WebhookVerificationError, verify_webhook
from .export import escape_formulas, to_csv
from .membership import (
    KeylessProtection,
    Membership,
    MembershipKey,
    MembershipQuota,
    MembershipUser,
)
from .paging import CsvPage, Page
from .ratelimit import RateLimitInfo
from .retry import RetryPolicy
from .transport import AsyncTransport, HTTPRequest, HTTPResponse, RequestsTransport, Transport

__all__ = [
    "__version__",
    "Client",
    "AsyncClient",
    "Event",
    "verify_webhook",
    "WebhookVerificationError",
    "Membership",
    "MembershipUser",
    "MembershipKey",
    "MembershipQuota",
    "KeylessProtection",
    "to_csv",
    "escape_formulas",
    "AsyncTransport",
    "HttpxTransport",
    "Page",
    "CsvPage",
    "ArrowPage",
    "SyncResult",
    "SyncError",
    "read_synced",
    "RetryPolicy",
    "RateLimitInfo",
    "Transport",
    "RequestsTransport",
    "HTTPRequest",
    "HTTPResponse",
    "Dataset",
    "Field",
    "Param",
    "list_datasets",
    "list_params",
    "list_fields",
]
# The exceptions, as iq_client.errors lists them (error_for, which builds one from an
# error envelope, stays there).
__all__ += [name for name in errors.__all__ if name != "error_for"]


def __getattr__(name: str) -> Any:
    # HttpxTransport needs the optional httpx: imported on first use only, so that
    # `import iq_client` works without it.
    if name == "HttpxTransport":
        from .httpx_transport import HttpxTransport

        return HttpxTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
