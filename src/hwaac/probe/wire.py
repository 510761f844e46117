"""The probe datagram and what the kernel hands back about it: the message format (magic, kind, TTL, session,
flow, sequence, send time, the responder's count and drops), ``IP_RECVERR`` error-queue entries with the ICMP
offender, and ``SO_RXQ_OVFL`` drop counts.

Error queue (Linux ``include/uapi/linux/errqueue.h``, ip(7) ``IP_RECVERR``): each ``MSG_ERRQUEUE`` message carries
a ``SOL_IP``/``IP_RECVERR`` control message holding ``struct sock_extended_err`` (``ee_errno`` u32, ``ee_origin``,
``ee_type``, ``ee_code``, ``ee_pad`` u8, ``ee_info``, ``ee_data`` u32) followed by ``SO_EE_OFFENDER``, the
``struct sockaddr_in`` of the host that sent the ICMP error; the data is the quoted payload of the datagram.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

MAGIC = b"HWPR"
# magic, kind, ttl, flags, session, flow, seq, send time (ns, the sender's monotonic clock), count, drops
HEADER = struct.Struct("!4sBBHIIIQII")
PROBE, REPLY, COUNT, COUNT_ANSWER, TRACE, TRACE_REPLY = range(1, 7)
ANSWER = {PROBE: REPLY, COUNT: COUNT_ANSWER, TRACE: TRACE_REPLY}
MAX_SIZE = 1472  # one 1500-byte IP packet

IP_RECVERR = getattr(socket, "IP_RECVERR", 11)
MSG_ERRQUEUE = getattr(socket, "MSG_ERRQUEUE", 0x2000)
SO_RXQ_OVFL = getattr(socket, "SO_RXQ_OVFL", 40)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
IP_FREEBIND = getattr(socket, "IP_FREEBIND", 15)  # linux/in.h; Python's socket module does not name it
SO_EE_ORIGIN_ICMP = 2
ICMP_DEST_UNREACH, ICMP_TIME_EXCEEDED = 3, 11
ICMP_PORT_UNREACH = 3
_EXT_ERR = struct.Struct("=IBBBBII")
_SOCKADDR_IN = struct.Struct("=H2s4s")
_U32 = struct.Struct("=I")
ANC_SPACE = socket.CMSG_SPACE(_EXT_ERR.size + 16) + socket.CMSG_SPACE(4)


@dataclass(frozen=True, slots=True)
class Message:
    kind: int
    ttl: int
    session: int
    flow: int
    seq: int
    t_ns: int
    count: int
    drops: int


def pack(
    kind: int,
    *,
    session: int,
    flow: int,
    seq: int,
    ttl: int = 0,
    t_ns: int = 0,
    count: int = 0,
    drops: int = 0,
    size: int = HEADER.size,
) -> bytes:
    """A datagram of ``size`` bytes (at least the header), zero-padded."""
    head = HEADER.pack(
        MAGIC,
        kind,
        ttl & 0xFF,
        0,
        session & 0xFFFFFFFF,
        flow & 0xFFFFFFFF,
        seq & 0xFFFFFFFF,
        t_ns & 0xFFFFFFFFFFFFFFFF,
        count & 0xFFFFFFFF,
        drops & 0xFFFFFFFF,
    )
    return head + bytes(max(0, min(size, MAX_SIZE) - HEADER.size))


def answer(msg: Message, *, count: int, drops: int, size: int) -> bytes:
    """The responder's answer to ``msg`` (kind :data:`ANSWER`), ``size`` bytes: the message's session, flow,
    sequence, TTL and send time echoed, with the responder's ``count`` and receive-buffer ``drops``."""
    return pack(
        ANSWER[msg.kind],
        session=msg.session,
        flow=msg.flow,
        seq=msg.seq,
        ttl=msg.ttl,
        t_ns=msg.t_ns,
        count=count,
        drops=drops,
        size=size,
    )


def unpack(data: bytes) -> Message | None:
    """The message at the start of ``data``, None when it is no probe message (short or another magic)."""
    if len(data) < HEADER.size:
        return None
    magic, kind, ttl, _flags, session, flow, seq, t_ns, count, drops = HEADER.unpack_from(data)
    if magic != MAGIC or not PROBE <= kind <= TRACE_REPLY:
        return None
    return Message(kind, ttl, session, flow, seq, t_ns, count, drops)


@dataclass(frozen=True, slots=True)
class QueuedError:
    """One error-queue entry: the errno, where it came from, the ICMP type and code, and the offender."""

    errno: int
    origin: int
    type: int
    code: int
    offender: str | None

    @property
    def icmp(self) -> bool:
        return self.origin == SO_EE_ORIGIN_ICMP

    @property
    def time_exceeded(self) -> bool:
        return self.icmp and self.type == ICMP_TIME_EXCEEDED

    @property
    def port_unreachable(self) -> bool:
        return self.icmp and self.type == ICMP_DEST_UNREACH and self.code == ICMP_PORT_UNREACH


def queued_error(ancdata: list[tuple[int, int, bytes]]) -> QueuedError | None:
    """The ``IP_RECVERR`` control message of a ``MSG_ERRQUEUE`` read, None when there is none."""
    for level, kind, data in ancdata:
        if level != socket.IPPROTO_IP or kind != IP_RECVERR or len(data) < _EXT_ERR.size:
            continue
        errno, origin, typ, code, _pad, _info, _data = _EXT_ERR.unpack_from(data)
        offender = None
        rest = data[_EXT_ERR.size :]
        if len(rest) >= _SOCKADDR_IN.size:
            family, _port, addr = _SOCKADDR_IN.unpack_from(rest)
            if family == socket.AF_INET:
                offender = socket.inet_ntoa(addr)
        return QueuedError(errno, origin, typ, code, offender)
    return None


def rxq_drops(ancdata: list[tuple[int, int, bytes]]) -> int | None:
    """The socket's receive-queue drop count (``SO_RXQ_OVFL``) carried with a datagram, None without it."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL and len(data) >= _U32.size:
            return _U32.unpack_from(data)[0]
    return None


__all__ = [
    "ANC_SPACE",
    "ANSWER",
    "COUNT",
    "COUNT_ANSWER",
    "HEADER",
    "IP_FREEBIND",
    "IP_RECVERR",
    "MAGIC",
    "MSG_ERRQUEUE",
    "PROBE",
    "REPLY",
    "SO_RCVBUFFORCE",
    "SO_RXQ_OVFL",
    "TRACE",
    "TRACE_REPLY",
    "Message",
    "QueuedError",
    "answer",
    "pack",
    "queued_error",
    "rxq_drops",
    "unpack",
]
