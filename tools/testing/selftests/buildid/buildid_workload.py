#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# A process for procmap_bench to profile: python3 with the extension modules
# of the standard library loaded (over 300 mappings, about 40 libraries) and a
# loop that spends its time in many of them, as a real multi-library service
# does.  Prints "ready" once everything is imported, then works until killed.

import importlib
import sys
import threading
import warnings

warnings.simplefilter("ignore")
MODULES = """_asyncio _bz2 _codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr
_codecs_tw _contextvars _crypt _ctypes _curses _curses_panel _dbm _decimal _hashlib _json
_lsprof _lzma _multibytecodec _multiprocessing _posixshmem _queue _sqlite3 _ssl _uuid
_zoneinfo audioop mmap nis readline resource termios""".split()
for name in MODULES:
    try:
        importlib.import_module(name)
    except ImportError:
        pass

import bz2
import ctypes
import decimal
import hashlib
import json
import lzma
import sqlite3
import ssl
import xml.etree.ElementTree as ET
import zlib

libc = ctypes.CDLL(None)
text = " ".join(str(i * 7919) for i in range(2000)).encode()


def work(n, db):
    hashlib.sha256(text).hexdigest()
    hashlib.md5(text).hexdigest()
    zlib.compress(text)
    bz2.compress(text[:4000])
    lzma.compress(text[:2000])
    json.loads(json.dumps({"n": n, "items": list(range(200))}))
    decimal.getcontext().prec = 50
    decimal.Decimal(n + 1).sqrt()
    db.execute("insert or replace into t values (?, ?)", (n % 500, str(n)))
    db.execute("select count(*), max(v) from t").fetchone()
    ET.fromstring("<a><b x='1'/><c>%d</c></a>" % n).find("c")
    "漢字かな交じり文".encode("shift_jis").decode("shift_jis")
    libc.strlen(b"a C library call through ctypes")
    ssl.create_default_context() if n % 50 == 0 else None


def loop():
    db = sqlite3.connect(":memory:")
    db.execute("create table t (k integer primary key, v text)")
    n = 0
    while True:
        work(n, db)
        n += 1


# A second thread adds its stack and guard mappings, as in a threaded server.
threading.Thread(target=loop, daemon=True).start()
print("ready", flush=True)
loop()
