"""How the worker reaches the server: plaintext, TLS or mTLS, and a bearer token.

Settings, from the environment only (a token on the command line would show
in every process listing):
    OJS_TLS_CA    PEM file of the CA that signed the server's certificate
    OJS_TLS_CERT  PEM file of this worker's client certificate (mTLS)
    OJS_TLS_KEY   PEM file of its private key
    OJS_TLS       "true": TLS trusting the system's roots (implied by the above)
    OJS_TOKEN     sent as `authorization: Bearer <token>` on every call
"""
from __future__ import annotations

import os
from collections.abc import Mapping

import grpc


class SettingError(Exception):
    """A security setting the worker cannot use; the message names it."""


def open_channel(server: str, env: Mapping[str, str] = os.environ) -> grpc.aio.Channel:
    """A channel to `server` with the security the environment asks for.

    The token goes as gRPC call credentials, which grpc sends over TLS only:
    over plaintext anyone on the path could read it, so a token without TLS
    is a setting error rather than a silent leak.
    """
    paths = {name: env.get(name) or None for name in ("OJS_TLS_CA", "OJS_TLS_CERT", "OJS_TLS_KEY")}
    token = env.get("OJS_TOKEN") or None
    if env.get("OJS_TLS") != "true" and not any(paths.values()):
        if token is not None:
            raise SettingError("OJS_TOKEN needs TLS (OJS_TLS_CA, or OJS_TLS=true): in plaintext anyone on the path could read it")
        return grpc.aio.insecure_channel(server)
    if (paths["OJS_TLS_CERT"] is None) != (paths["OJS_TLS_KEY"] is None):
        raise SettingError("OJS_TLS_CERT and OJS_TLS_KEY go together: a client certificate needs its key")
    pems = {name: read_pem(name, path) for name, path in paths.items()}
    credentials = grpc.ssl_channel_credentials(
        root_certificates=pems["OJS_TLS_CA"], private_key=pems["OJS_TLS_KEY"], certificate_chain=pems["OJS_TLS_CERT"],
    )
    if token is not None:
        credentials = grpc.composite_channel_credentials(credentials, grpc.access_token_call_credentials(token))
    return grpc.aio.secure_channel(server, credentials)


def read_pem(setting: str, path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise SettingError(f"{setting}: cannot read {path}: {error.strerror}") from error
