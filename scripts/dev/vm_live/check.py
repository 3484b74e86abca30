#!/usr/bin/env python3
"""Judges what guest.sh recorded in a real kernel (run on the host after the VM is off).
Usage: check.py OUT_DIR BLESNIFF. Prints "ok NAME" or "FAIL NAME: why" per check; exit 1 on any
failure. btmon's file is the reference: blesniff's must hold the same records (adapter, monitor
opcode, bytes) with timestamps within 1 ms."""
import os, re, struct, subprocess, sys

OUT, BLESNIFF = sys.argv[1], sys.argv[2]
BTSNOOP_EPOCH = 0x00DCDDB30F2F8000  # microseconds from year 0 to 1970
failures = 0

def result(name, ok, why=''):
    global failures
    print(('ok ' + name) if ok else ('FAIL ' + name + ': ' + why), flush=True)
    failures += 0 if ok else 1

def read_records(path):
    """[(microseconds since 1970, adapter, opcode, payload)] from a btsnoop (2001) or pcap (254) file."""
    data = open(path, 'rb').read()
    out = []
    if data[:8] == b'btsnoop\0':
        version, datalink = struct.unpack('>II', data[8:16])
        assert datalink == 2001, f'{path}: btsnoop datalink {datalink}'
        at = 16
        while at + 24 <= len(data):
            orig, incl, flags, drops, ts = struct.unpack('>IIIIq', data[at:at + 24])
            body = data[at + 24:at + 24 + incl]
            assert len(body) == incl, f'{path}: truncated record at {at}'
            out.append((ts - BTSNOOP_EPOCH, flags >> 16, flags & 0xffff, body))
            at += 24 + incl
        assert at == len(data), f'{path}: {len(data) - at} stray bytes at the end'
        return out
    magic = struct.unpack('<I', data[:4])[0]
    e = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    nano = struct.unpack(e + 'I', data[:4])[0] == 0xa1b23c4d
    assert struct.unpack(e + 'I', data[20:24])[0] == 254, f'{path}: not link type 254'
    at = 24
    while at + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(e + 'IIII', data[at:at + 16])
        body = data[at + 16:at + 16 + incl]
        assert len(body) == incl, f'{path}: truncated record at {at}'
        adapter, opcode = struct.unpack('>HH', body[:4])
        out.append((sec * 1_000_000 + (frac // 1000 if nano else frac), adapter, opcode, body[4:]))
        at += 16 + incl
    assert at == len(data), f'{path}: {len(data) - at} stray bytes at the end'
    return out

def after_open(records, cut):
    """Records after `cut`: the kernel replays its state (system notes, adapters, control sockets)
    to each monitor socket as it opens, at that socket's own open time, so those differ."""
    return [r for r in records if r[0] > cut]

def compare(name, ref, other, adapter=None, prefix=False):
    """`other` must equal `ref` record for record (the prefix of it with prefix=True)."""
    if adapter is not None:
        ref = [r for r in ref if r[1] in (adapter, 0xffff)]
    if prefix:
        ref = ref[:len(other)]
    if not other:
        return result(name, False, 'no records after the recorders opened')
    worst = 0
    for i, (a, b) in enumerate(zip(ref, other)):
        if a[1:] != b[1:]:
            return result(name, False, f'record {i}: btmon hci{a[1]} op {a[2]} {a[3][:24].hex()} / blesniff hci{b[1]} op {b[2]} {b[3][:24].hex()}')
        worst = max(worst, abs(a[0] - b[0]))
    if len(ref) != len(other):
        return result(name, False, f'btmon has {len(ref)} records after the recorders opened, blesniff {len(other)}')
    result(name, worst <= 1000, f'timestamps differ by up to {worst} us')
    print(f'   {len(other)} records equal, timestamps within {worst} us', flush=True)

def text(f):
    p = os.path.join(OUT, f)
    return open(p, errors='replace').read() if os.path.exists(p) else ''

try:
    btmon = read_records(os.path.join(OUT, 'btmon.btsnoop'))
except Exception as e:
    result('btmon recorded', False, str(e)); sys.exit(1)
files = {f: read_records(os.path.join(OUT, f)) for f in ('live.pcap', 'live.btsnoop', 'hci1.pcap', 'sigint.btsnoop')
         if os.path.exists(os.path.join(OUT, f))}
# Everything after the last recorder opened (guest.sh waits 2 s more before any traffic).
cut = max(r[0][0] for r in [btmon] + list(files.values()) if r) + 1_000_000
ref = after_open(btmon, cut)

# The session itself: what the kernel and the peripheral exchanged. Each step must be in btmon's
# file and in blesniff's pcap and btsnoop files (which must also equal btmon's, record for record,
# below).
def acl(r, cid):
    return r[2] in (4, 5) and len(r[3]) >= 9 and struct.unpack('<H', r[3][6:8])[0] == cid
def att(rs, op): return any(acl(r, 4) and r[3][8] == op for r in rs)
def smp(rs, op): return any(acl(r, 6) and r[3][8] == op for r in rs)
def event(rs, code, sub=None): return any(r[2] == 3 and r[3][0] == code and (sub is None or r[3][2] == sub) for r in rs)
def command(rs, ogf_ocf, params=None): return any(r[2] == 2 and struct.unpack('<H', r[3][:2])[0] == ogf_ocf and (params is None or r[3][3:3 + len(params)] == params) for r in rs)
def encrypted(rs):
    """Encryption Change with status 0 and encryption on."""
    return any(r[2] == 3 and r[3][0] == 0x08 and len(r[3]) >= 6 and r[3][2] == 0 and r[3][5] != 0 for r in rs)
def disconnected(rs):
    """Disconnection Complete with status 0, after an HCI Disconnect command."""
    return command(rs, 0x0406) and any(r[2] == 3 and r[3][0] == 0x05 and len(r[3]) >= 3 and r[3][2] == 0 for r in rs)
session = {
    'scan with duplicates (LE Set Scan Enable, filter_duplicates=0)': lambda rs: command(rs, 0x200c, b'\x01\x00'),
    'advertising reports': lambda rs: event(rs, 0x3e, 0x02) or event(rs, 0x3e, 0x0d),
    'connection (LE Connection Complete or LE Enhanced Connection Complete)': lambda rs: event(rs, 0x3e, 0x01) or event(rs, 0x3e, 0x0a),
    'ATT Read By Group Type Request and Response': lambda rs: att(rs, 0x10) and att(rs, 0x11),
    'ATT Read By Type Response (characteristics)': lambda rs: att(rs, 0x09),
    'ATT Read Response or Read By Type value': lambda rs: att(rs, 0x0b) or att(rs, 0x09),
    'ATT Write Request/Response (CCCD)': lambda rs: att(rs, 0x12) and att(rs, 0x13),
    'ATT Handle Value Notification': lambda rs: att(rs, 0x1b),
    'SMP Pairing Request and Response': lambda rs: smp(rs, 0x01) and smp(rs, 0x02),
    'SMP Secure Connections: Pairing Public Keys and DHKey Checks': lambda rs: smp(rs, 0x0c) and smp(rs, 0x0d),
    'encryption on (LE Start Encryption, Encryption Change)': lambda rs: command(rs, 0x2019) and encrypted(rs),
    'disconnect (HCI Disconnect, Disconnection Complete)': disconnected,
}
mine = {name: after_open(files[f], cut) for f, name in (('live.pcap', 'pcap'), ('live.btsnoop', 'btsnoop')) if f in files}
for what, seen in session.items():
    missing = [who for who, rs in [('btmon', ref)] + list(mine.items()) if not seen(rs)]
    result('session: ' + what, not missing and len(mine) == 2, 'not in ' + ', '.join(missing or ['blesniff (no files)']))

# Every record equal to btmon's, timestamps within 1 ms.
for f, name in (('live.pcap', 'pcap'), ('live.btsnoop', 'btsnoop')):
    if f in files: compare(f'-w {name}: every record equal to btmon\'s', ref, after_open(files[f], cut))
    else: result(f'-w {name} written', False, 'missing')
if 'hci1.pcap' in files:
    h = files['hci1.pcap']
    result('--interface hci1: only hci1 and system records', all(r[1] in (1, 0xffff) for r in h) and any(r[1] == 1 for r in h),
           'adapters seen: ' + str(sorted({r[1] for r in h})))
    compare('--interface hci1: equal to btmon\'s hci1 records', ref, after_open(h, cut), adapter=1)
# Started before any adapter existed: said once that it waits, then recorded hci1 once it came.
wait_err = open(os.path.join(OUT, 'wait.err'), errors='replace').read() if os.path.exists(os.path.join(OUT, 'wait.err')) else ''
wait = read_records(os.path.join(OUT, 'wait.pcap')) if os.path.exists(os.path.join(OUT, 'wait.pcap')) else []
result('--interface hci1 before hci1 exists: waits, says so once, then records hci1',
       wait_err.count('waiting for hci1') == 1 and any(r[1] == 1 for r in wait) and all(r[1] in (1, 0xffff) for r in wait),
       f'{wait_err.count("waiting for hci1")} waiting messages, adapters seen: {sorted({r[1] for r in wait})}; stderr: {wait_err.strip()[:200]}')
if 'sigint.btsnoop' in files:
    compare('SIGINT mid-session: complete file, equal to btmon\'s up to the stop', ref, after_open(files['sigint.btsnoop'], cut), prefix=True)
else:
    result('SIGINT mid-session file', False, 'missing')

# Adapter lists.
l0, l2 = text('list0.txt'), text('list2.txt')
result('--list with no adapter', 'no Bluetooth adapters' in l0 and 'rc=0' in l0, l0.strip())
result('--list with two adapters', re.search(r'^hci0  00:1b:dc:00:00:01', l2, re.M | re.I) is not None
       and re.search(r'^hci1  00:1b:dc:00:00:02', l2, re.M | re.I) is not None and 'rc=0' in l2, l2.strip())
# Unprivileged: the monitor socket is refused, HCIGETDEVLIST/HCIGETDEVINFO still list both (up).
ln, le, cn = text('list-nobody.txt'), text('list-nobody.err'), text('capture-nobody.txt')
result('--list unprivileged (HCIGETDEVLIST fallback): both adapters, address, bus, up',
       re.search(r'^hci0  00:1b:dc:00:00:01  virtual  primary  up$', ln, re.M | re.I) is not None
       and re.search(r'^hci1  00:1b:dc:00:00:02  virtual  primary  up$', ln, re.M | re.I) is not None
       and 'rc=0' in ln, ln.strip().replace('\n', '; '))
result('--list unprivileged: says once on stderr that capturing needs privileges',
       le.count('needs privileges') == 1 and 'HCI socket' in le and len(le.strip().splitlines()) == 1, le.strip())
result('capture unprivileged: refused (exit 2) with the privileges message',
       'needs privileges' in cn and 'rc=2' in cn, cn.strip().replace('\n', '; '))

# Live audit = offline audit of the written file.
def findings(t): return sorted(l.strip() for l in t.splitlines() if re.match(r'\s+(error|warning|note) BLE', l))
def counts(t): return re.findall(r': (\d+ errors?, \d+ warnings?, \d+ notes?)', t)[-1:]
live, offline = text('live.btsnoop.err'), text('offline-audit.txt')
result('--audit live reports what audit of the written file reports',
       findings(live) == findings(offline) and counts(live) == counts(offline) and counts(live) != [],
       f'live {counts(live)} {findings(live)} / offline {counts(offline)} {findings(offline)}')

# Rotation while live.
rot = sorted(f for f in os.listdir(OUT) if f.startswith('rot.pcap'))
ok, why = len(rot) == 3, f'files {rot}'
for f in rot:
    size = os.path.getsize(os.path.join(OUT, f))
    try: n = len(read_records(os.path.join(OUT, f)))
    except Exception as e: ok, why = False, str(e); continue
    if size > 3000 or n == 0: ok, why = False, f'{f}: {size} bytes, {n} records'
result('--file-size 0.003 --files 3 rotation while live: 3 complete files within the size', ok, why)

# Privilege drop: nobody, no capabilities left, the file still written.
st = text('priv.status')
ids = dict(re.findall(r'^(\w+):\s*(.*)$', st, re.M))
dropped = ids.get('Uid', '').split()[:1] == ['65534'] and ids.get('Gid', '').split()[:1] == ['65534'] \
    and int(ids.get('CapEff', '1'), 16) == 0 and int(ids.get('CapPrm', '1'), 16) == 0
result('--user nobody: runs as nobody with no capabilities (CAP_NET_RAW gone)', dropped, st.strip().replace('\n', '; '))
try:
    priv = read_records(os.path.join(OUT, 'priv.pcap'))
    compare('--user nobody: writing still works, records equal to btmon\'s', ref, after_open(priv, cut))
except Exception as e:
    result('--user nobody: file written', False, str(e))

ex = text('exits.txt')
result('every recorder exited 0 on SIGINT', ex.count('rc=0') == 8, ex.strip().replace('\n', '; '))
sys.exit(1 if failures else 0)
