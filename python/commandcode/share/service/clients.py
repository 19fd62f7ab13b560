"""Who a request comes from, for the team service's per-client connection limit.

A client is the connection's peer address, unless that peer is one of the `--trusted-proxy`
addresses or networks (a load balancer): then it is the address the proxies recorded in
`X-Forwarded-For`, read from the right, the first one that is not itself a trusted proxy (the
leftmost when all are; the last good hop when an entry is malformed). `X-Forwarded-For` from
any other peer is never read, so a client cannot choose whose limit it counts against.
"""

from __future__ import annotations

import ipaddress
import threading
from collections import Counter
from collections.abc import Sequence

from ...errors import UsageError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(given: Sequence[str]) -> list[Network]:
    """The `--trusted-proxy` values (an address, or a network such as 10.0.0.0/8).

    Raises:
        UsageError: a value is neither.
    """
    networks: list[Network] = []
    for text in given:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise UsageError(f"--trusted-proxy {text!r} is not an IP address or network",
                             hint="give the load balancer's address, e.g. 10.0.0.5 or 10.0.0.0/24") from None
    return networks


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class Clients:
    """Open connections (or, through a trusted proxy, requests) per client address."""

    def __init__(self, max_per_client: int, trusted: Sequence[Network] = ()) -> None:
        self.max_per_client = max_per_client
        self.trusted_networks = list(trusted)
        self.open: Counter[str] = Counter()
        self.lock = threading.Lock()

    def trusted(self, peer: str) -> bool:
        address = _address(peer) if self.trusted_networks else None
        return address is not None and any(address in network for network in self.trusted_networks)

    def client_of(self, peer: str, forwarded: Sequence[str]) -> str:
        """The client behind `peer` (`forwarded`: the `X-Forwarded-For` headers' values)."""
        if not self.trusted(peer):
            return peer
        client = peer
        for item in reversed(",".join(forwarded).split(",") if forwarded else []):
            address = _address(item)
            if address is None:
                break
            client = str(address)
            if not any(address in network for network in self.trusted_networks):
                break
        return client

    def take(self, client: str) -> bool:
        """Counts one more for `client`; False (nothing counted) when it is at the limit."""
        with self.lock:
            if self.open[client] >= self.max_per_client:
                return False
            self.open[client] += 1
            return True

    def release(self, client: str) -> None:
        with self.lock:
            self.open[client] -= 1
            if self.open[client] <= 0:
                del self.open[client]
