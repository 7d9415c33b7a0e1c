"""No network in the conversion worker: a model that downloads at construction fails at once.

Some LEMUR models fetch pretrained weights in `__init__` (torchvision's `weights=`, torch.hub,
Hugging Face). Without a network they would hang until timeouts; with one, the graph would depend on
what the server returned that day. The worker therefore sets the Hugging Face offline switches, makes
torch.hub's downloader raise, and refuses every outbound connection that is not to this host.
Files already in torch.hub's cache still load: a cached checkpoint is not a download.
"""

from __future__ import annotations

import ipaddress
import os
import socket

DOWNLOADS = "the model downloads weights at construction; nnlite converts offline"
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}


class OfflineDownload(ConnectionRefusedError):
    """A download or outbound connection was attempted in the offline conversion worker."""


def _is_local(host) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host).split("%", 1)[0]
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _refuse(what: str) -> OfflineDownload:
    return OfflineDownload(f"{DOWNLOADS} (refused: {what})")


def enforce() -> None:
    """Apply the offline rules to this process (idempotent)."""
    if getattr(socket, "_nnlite_offline", False):
        return
    os.environ.update(_OFFLINE_ENV)
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
    getaddrinfo, create_connection = socket.getaddrinfo, socket.create_connection

    def _check(sock, address) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            raise _refuse(f"connection to {address[0]}:{address[1]}")

    def guarded_connect(self, address):
        _check(self, address)
        return connect(self, address)

    def guarded_connect_ex(self, address):
        _check(self, address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        # Refused before the name is resolved, so no DNS timeout either.
        if not _is_local(host):
            raise _refuse(f"name lookup of {host}")
        return getaddrinfo(host, *args, **kwargs)

    def guarded_create_connection(address, *args, **kwargs):
        if not _is_local(address[0]):
            raise _refuse(f"connection to {address[0]}:{address[1]}")
        return create_connection(address, *args, **kwargs)

    # the worker's own sockets, patched for every library in the process (the point of this module)
    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = guarded_getaddrinfo
    socket.create_connection = guarded_create_connection
    setattr(socket, "_nnlite_offline", True)  # a mark on the module: enforce() patches once
    _guard_torch_hub()


def _guard_torch_hub() -> None:
    """torch.hub's downloader raises at once; load_state_dict_from_url still reads its cache."""
    import torch.hub

    def no_download(url, dst, *args, **kwargs):
        raise _refuse(f"download of {url}")

    # load_state_dict_from_url (also torchvision's copy of it) calls this module global on a miss.
    torch.hub.download_url_to_file = no_download


def explain(exc: BaseException) -> BaseException | None:
    """An OfflineDownload for a failure caused by a refused download anywhere in the chain."""
    seen = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, OfflineDownload):
            return link
        name = type(link).__name__
        if name in ("OfflineModeIsEnabled", "LocalEntryNotFoundError") or "HF_HUB_OFFLINE" in str(link):
            return OfflineDownload(f"{DOWNLOADS} ({name})")
        link = link.__cause__ or link.__context__
    return None
