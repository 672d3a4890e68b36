"""Python client for the AI-hardware price index service.

Query results come back as pandas DataFrames (dates ``datetime64``, points and prices
``float64``, or exact ``Decimal`` on request); parameters and fields of the five
datasets are known offline; bad queries are refused before they are sent; errors are
typed exceptions carrying ``code``, ``message``, ``request_id`` and ``http_status``.

    >>> from iq_client import Client
    >>> client = Client()  # key from IQ_API_KEY, service from IQ_BASE_URL
    >>> df = client.index_daily(index_code="GPU_Index", start_date="20260101")
"""

from ._version import __version__
from .catalogue import Dataset, Field, Param, list_datasets, list_fields, list_params
from .client import Client
from .errors import (
    APIError,
    AuthenticationError,
    Conflict,
    InvalidRequest,
    IQError,
    LocalValidationError,
    NotFound,
    PermissionDenied,
    QuotaExhausted,
    RateLimited,
    ServerError,
    TransportError,
)
from .paging import Page
from .ratelimit import RateLimitInfo
from .retry import RetryPolicy
from .transport import HTTPRequest, HTTPResponse, RequestsTransport, Transport

__all__ = [
    "__version__",
    "Client",
    "Page",
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
    "IQError",
    "APIError",
    "AuthenticationError",
    "PermissionDenied",
    "RateLimited",
    "QuotaExhausted",
    "InvalidRequest",
    "LocalValidationError",
    "NotFound",
    "Conflict",
    "ServerError",
    "TransportError",
]
