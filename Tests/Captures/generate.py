#!/usr/bin/env python3
"""Record blesniff's test captures from Google's Bumble Bluetooth stack.

Two Bumble hosts (a central "phone" and a peripheral "sensor") run over virtual
controllers joined by a LocalLink, in one process. The HCI traffic between one
host (normally the central) and its controller is written as btsnoop H4 (1002)
and pcap DLT 201.

Output is deterministic: fixed addresses and names, seeded randomness (pairing
keys, nonces, RSSI) and a virtual clock. The event loop never waits: when it is
idle it jumps to its next timer, and every recorded HCI packet takes 0.5 ms, so
a 35 s idle connection costs no real time and timestamps repeat across runs.

Usage: generate.py [--out DIR] [SCENARIO...]   (no scenario: all of them)
"""

import argparse
import asyncio
import logging
import os
import random
import secrets
import struct
import subprocess
import sys

# Seeded randomness, installed before Bumble draws any (keys, nonces, addresses).
RNG = random.Random(0)


def _token_bytes(n=32):
    return bytes(RNG.getrandbits(8) for _ in range(n))


secrets.token_bytes = _token_bytes
secrets.randbelow = lambda n: RNG.randrange(n)

from bumble import att, gatt, hci, ll  # noqa: E402
from bumble import controller as bumble_controller  # noqa: E402
from bumble import gatt_server  # noqa: E402
from bumble import crypto  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.core import UUID  # noqa: E402
from bumble.device import Device, DeviceConfiguration, Peer  # noqa: E402
from bumble.host import Host  # noqa: E402
from bumble.link import LocalLink  # noqa: E402
from bumble.pairing import PairingConfig, PairingDelegate  # noqa: E402
from bumble.transport.common import AsyncPipeSink  # noqa: E402

# Deterministic P-256 keys for LE Secure Connections.
crypto.EccKey.generate = classmethod(
    lambda cls: cls.from_private_key_bytes(
        (RNG.randrange(1, 2**255)).to_bytes(32, 'big')))

# Capture start: 2024-06-01 12:00:00 UTC.
EPOCH_UNIX_S = 1717243200
PACKET_TIME_S = 0.0005  # HCI transport latency given to every recorded packet

CENTRAL_ADDR = 'C0:11:22:33:44:55'
PERIPH_ADDR = 'D4:AB:CD:00:00:01'

CUSTOM_SERVICE = UUID('8D5A0001-6C3B-4E5F-9A1D-2B7C4E8F0A11')
CUSTOM_LONG = UUID('8D5A0002-6C3B-4E5F-9A1D-2B7C4E8F0A11')
CUSTOM_WRITE = UUID('8D5A0003-6C3B-4E5F-9A1D-2B7C4E8F0A11')
CUSTOM_INDICATE = UUID('8D5A0004-6C3B-4E5F-9A1D-2B7C4E8F0A11')
SCAN_RSP_UUID128 = CUSTOM_SERVICE.to_bytes(force_128=True)  # little-endian, as on the air

LONG_VALUE = bytes(range(0x20, 0x7f)) + b'|blesniff-long-value-end'  # 119 bytes


# ---------------------------------------------------------------------------
class VirtualClockLoop(asyncio.SelectorEventLoop):
    """Event loop whose clock jumps to the next timer instead of sleeping."""

    def __init__(self):
        super().__init__()
        self.now = 0.0
        real = self._selector
        loop = self

        class _Selector:
            idle = 0

            def select(self, timeout=None):
                if timeout is None:
                    _Selector.idle += 1
                    if _Selector.idle > 100000:
                        raise RuntimeError('event loop deadlocked')
                else:
                    _Selector.idle = 0
                    loop.now += timeout
                return real.select(0)

            def __getattr__(self, name):
                return getattr(real, name)

        self._selector = _Selector()

    def time(self):
        return self.now


# Legacy advertising intervals are in 0.625 ms units; the controller's timer
# treats them as milliseconds.
def _adv_timer_fired(self):
    self.send_advertising_data()
    self.timer_handle = asyncio.get_running_loop().call_later(
        self.advertising_interval_min * 0.000625, self._on_timer_fired)


bumble_controller.LegacyAdvertiser._on_timer_fired = _adv_timer_fired


class SimController(Controller):
    """A legacy (4.x-style) LE controller: legacy advertising and scanning
    commands, scan responses carrying the advertiser's scan response data,
    and duplicate filtering when the host asks for it."""

    le_features = Controller.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reported = set()

    def on_hci_le_set_scan_enable_command(self, command):
        self.reported = set()
        return super().on_hci_le_set_scan_enable_command(command)

    def _report(self, event_type, address, data):
        key = (event_type, bytes(address))
        if self.filter_duplicates and key in self.reported:
            return
        self.reported.add(key)
        report = hci.HCI_LE_Advertising_Report_Event.Report(
            event_type=event_type,
            address_type=address.address_type,
            address=address,
            data=data,
            rssi=RNG.randint(-74, -48),
        )
        self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))

    def on_advertising_pdu(self, pdu):
        if not isinstance(pdu, ll.AdvInd):
            return super().on_advertising_pdu(pdu)
        if self.le_scan_enable:
            types = hci.HCI_LE_Advertising_Report_Event.EventType
            self._report(types.ADV_IND, pdu.advertiser_address, pdu.data)
            if self.le_scan_type == 1:  # active: SCAN_REQ / SCAN_RSP
                adv = next((c.le_legacy_advertiser for c in self.link.controllers
                            if c.le_legacy_advertiser.enabled
                            and c.le_legacy_advertiser.address == pdu.advertiser_address), None)
                if adv is not None:
                    self._report(types.SCAN_RSP, pdu.advertiser_address,
                                 adv.scan_response_data)
        pending = self.pending_le_connection
        if pending and pending.peer_address == pdu.advertiser_address:
            self.create_le_connection(pdu.advertiser_address)


class ExtController(Controller):
    """A Bluetooth 5 controller (LE Extended Advertising): each extended advertising event
    reported once as one LE Extended Advertising Report with its own event type and SID, no scan
    response unless one was asked for, and duplicate filtering when the host asks for it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reported = set()

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self.reported = set()
        return super().on_hci_le_set_extended_scan_enable_command(command)

    def on_advertising_pdu(self, pdu):
        if not isinstance(pdu, ll.AdvExtInd):
            return super().on_advertising_pdu(pdu)
        if not self.le_scan_enable:
            return
        key = (bytes(pdu.advertiser_address), pdu.data)
        if self.filter_duplicates and key in self.reported:
            return
        self.reported.add(key)
        report = hci.HCI_LE_Extended_Advertising_Report_Event.Report(
            event_type=hci.HCI_LE_Extended_Advertising_Report_Event.EventType.CONNECTABLE_ADVERTISING,
            address_type=pdu.advertiser_address.address_type,
            address=pdu.advertiser_address,
            primary_phy=hci.Phy.LE_1M, secondary_phy=hci.Phy.LE_2M,
            advertising_sid=pdu.sid, tx_power=0x7F, rssi=RNG.randint(-74, -48),
            periodic_advertising_interval=0, direct_address_type=0, direct_address=hci.Address.ANY,
            data=pdu.data)
        self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))


# ---------------------------------------------------------------------------
class Recorder:
    """Snooper keeping (virtual time, direction, H4 packet) records."""

    def __init__(self, loop):
        self.loop = loop
        self.records = []

    def snoop(self, packet, direction):
        self.loop.now += PACKET_TIME_S
        self.records.append((self.loop.now, int(direction), bytes(packet)))

    def write_btsnoop(self, path):
        # btsnoop timestamps: microseconds since 0000-01-01; 1970 is 0x00DCDDB30F2F8000.
        out = [b'btsnoop\0' + struct.pack('>II', 1, 1002)]
        for t, d, pkt in self.records:
            flags = d | (0x02 if pkt[0] in (0x01, 0x04) else 0)
            us = 0x00DCDDB30F2F8000 + EPOCH_UNIX_S * 1000000 + round(t * 1e6)
            out.append(struct.pack('>IIIIQ', len(pkt), len(pkt), flags, 0, us) + pkt)
        with open(path, 'wb') as f:
            f.write(b''.join(out))

    def write_pcap(self, path):
        out = [struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201)]
        for t, d, pkt in self.records:
            us = EPOCH_UNIX_S * 1000000 + round(t * 1e6)
            rec = struct.pack('>I', d) + pkt
            out.append(struct.pack('<IIII', us // 1000000, us % 1000000, len(rec), len(rec)) + rec)
        with open(path, 'wb') as f:
            f.write(b''.join(out))


# ---------------------------------------------------------------------------
def ad(*structures):
    return b''.join(bytes([len(v) + 1, t]) + v for t, v in structures)


def u16s(*uuids):
    return b''.join(struct.pack('<H', u) for u in uuids)


FLAGS = (0x01, b'\x06')
ADV_DATA = ad(FLAGS, (0x03, u16s(0x180D, 0x180F)), (0x09, b'HRM-1'), (0x0A, b'\x04'),
              (0x19, struct.pack('<H', 0x0341)), (0xFF, struct.pack('<H', 0x05F1) + b'\x01\x02'))
SCAN_RSP = ad((0x07, SCAN_RSP_UUID128))


class World:
    """A central and a peripheral on one virtual link; the central is recorded."""

    def __init__(self, loop, *, record='central', periph_name='HRM-1',
                 central_io=PairingDelegate.NO_OUTPUT_NO_INPUT,
                 periph_io=PairingDelegate.NO_OUTPUT_NO_INPUT, secure_connections=True,
                 extended=False):
        self.link = LocalLink()
        self.controller_class = ExtController if extended else SimController
        self.recorder = Recorder(loop)
        self.central = self._device('phone', CENTRAL_ADDR, '00:1B:DC:00:00:01')
        self.periph = self._device(periph_name, PERIPH_ADDR, '00:1B:DC:00:00:02')
        target = self.central if record == 'central' else self.periph
        target.host.snooper = self.recorder
        self.passkey = 123456
        for dev, io in ((self.central, central_io), (self.periph, periph_io)):
            delegate = FixedPasskeyDelegate(io, self.passkey)
            dev.pairing_config_factory = (
                lambda conn, d=delegate: PairingConfig(sc=secure_connections, mitm=True,
                                                      bonding=True, delegate=d))
        self.build_gatt()

    def _device(self, name, address, public_address):
        ctrl = self.controller_class(name, link=self.link, public_address=public_address)
        config = DeviceConfiguration(name=name, address=hci.Address(address))
        return Device(config=config, host=Host(ctrl, AsyncPipeSink(ctrl)))

    def build_gatt(self):
        R = gatt.Characteristic.Properties
        P = gatt.Characteristic.Permissions
        self.hr_measurement = gatt.Characteristic(
            gatt.GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, R.NOTIFY, 0, b'\x00\x48')
        self.body_location = gatt.Characteristic(
            gatt.GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC, R.READ, P.READABLE, b'\x01')
        self.battery = gatt.Characteristic(
            gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC, R.READ | R.NOTIFY, P.READABLE, b'\x5a')
        self.long_value = gatt.Characteristic(CUSTOM_LONG, R.READ, P.READABLE, LONG_VALUE)
        self.writable = gatt.Characteristic(
            CUSTOM_WRITE, R.READ | R.WRITE | R.WRITE_WITHOUT_RESPONSE,
            P.READABLE | P.WRITEABLE, bytes(4))
        self.indicate = gatt.Characteristic(CUSTOM_INDICATE, R.INDICATE, 0, b'\x00')
        self.first_name = gatt.Characteristic(
            UUID.from_16_bits(0x2A8A), R.READ | R.WRITE,
            P.READABLE | P.WRITEABLE, b'Ada')
        self.periph.add_services([
            gatt.Service(gatt.GATT_HEART_RATE_SERVICE, [self.hr_measurement, self.body_location]),
            gatt.Service(gatt.GATT_BATTERY_SERVICE, [self.battery]),
            gatt.Service(gatt.GATT_DEVICE_INFORMATION_SERVICE, [
                gatt.Characteristic(gatt.GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC,
                                    R.READ, P.READABLE, b'Bumble Labs'),
                gatt.Characteristic(gatt.GATT_MODEL_NUMBER_STRING_CHARACTERISTIC,
                                    R.READ, P.READABLE, b'HRM-1000'),
                gatt.Characteristic(gatt.GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC,
                                    R.READ, P.READABLE, b'1.2.3'),
            ]),
            gatt.Service(CUSTOM_SERVICE, [self.long_value, self.writable, self.indicate]),
            gatt.Service(UUID.from_16_bits(0x181C), [self.first_name]),
        ])

    def update_firmware(self):
        """The peripheral's database after a firmware update: Battery gone, Device Information
        with one more characteristic (so the services after it move), Running Speed and Cadence new."""
        R = gatt.Characteristic.Properties
        P = gatt.Characteristic.Permissions
        self.periph.gatt_server = gatt_server.Server(self.periph)
        self.periph.add_default_services()
        self.periph.add_services([
            gatt.Service(gatt.GATT_HEART_RATE_SERVICE, [self.hr_measurement, self.body_location]),
            gatt.Service(gatt.GATT_DEVICE_INFORMATION_SERVICE, [
                gatt.Characteristic(gatt.GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC,
                                    R.READ, P.READABLE, b'Bumble Labs'),
                gatt.Characteristic(gatt.GATT_MODEL_NUMBER_STRING_CHARACTERISTIC,
                                    R.READ, P.READABLE, b'HRM-1000'),
                gatt.Characteristic(gatt.GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC,
                                    R.READ, P.READABLE, b'2.0.0'),
                gatt.Characteristic(gatt.GATT_HARDWARE_REVISION_STRING_CHARACTERISTIC,
                                    R.READ, P.READABLE, b'B'),
            ]),
            gatt.Service(UUID.from_16_bits(0x1814), [
                gatt.Characteristic(UUID.from_16_bits(0x2A53), R.NOTIFY, 0, bytes(4))]),
            gatt.Service(CUSTOM_SERVICE, [self.long_value, self.writable, self.indicate]),
            gatt.Service(UUID.from_16_bits(0x181C), [self.first_name]),
        ])

    async def power_on(self):
        await self.periph.power_on()
        await self.central.power_on()

    async def advertise(self, adv=ADV_DATA, scan_rsp=SCAN_RSP, interval=100):
        await self.periph.start_advertising(
            advertising_data=adv, scan_response_data=scan_rsp,
            own_address_type=hci.OwnAddressType.RANDOM,
            advertising_interval_min=interval, advertising_interval_max=interval)

    async def scan(self, seconds, filter_duplicates=True, active=True, stop=True):
        await self.central.start_scanning(legacy=True, active=active,
                                          filter_duplicates=filter_duplicates)
        await asyncio.sleep(seconds)
        if stop:
            await self.central.stop_scanning(legacy=True)

    async def connect(self):
        conn = await self.central.connect(hci.Address(PERIPH_ADDR))
        peer = Peer(conn)
        await settle()
        return conn, peer

    async def disconnect(self, conn):
        await conn.disconnect()
        await settle()


class FixedPasskeyDelegate(PairingDelegate):
    def __init__(self, io, passkey):
        super().__init__(io_capability=io)
        self.passkey = passkey

    async def confirm(self, auto=False):
        return True

    async def compare_numbers(self, number, digits):
        return True

    async def get_number(self):
        return self.passkey

    async def generate_passkey(self):
        return self.passkey

    async def display_number(self, number, digits):
        pass


async def settle(seconds=0.05):
    await asyncio.sleep(seconds)


def find_char(peer, uuid):
    for service in peer.services:
        for ch in service.characteristics:
            if ch.uuid == uuid:
                return ch
    raise LookupError(str(uuid))


# ---------------------------------------------------------------------------
# Scenarios. Each returns the World whose recorder holds the capture.

async def sc_adv_scan(loop):
    w = World(loop)
    await w.power_on()
    await w.advertise()
    await w.scan(1.5)
    await settle()
    return w


async def sc_gatt_session(loop):
    w = World(loop)
    await w.power_on()
    await w.advertise()
    await w.scan(0.5)
    conn, peer = await w.connect()
    await peer.request_mtu(64)
    await peer.discover_services()
    for s in peer.services:
        await s.discover_characteristics()
        for ch in s.characteristics:
            await ch.discover_descriptors()
    gc = conn.gatt_client
    await find_char(peer, gatt.GATT_DEVICE_NAME_CHARACTERISTIC).read_value()
    await find_char(peer, gatt.GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC).read_value()
    await find_char(peer, gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC).read_value()
    await find_char(peer, gatt.GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC).read_value()
    await find_char(peer, CUSTOM_LONG).read_value()  # Read + Read Blob
    wr = find_char(peer, CUSTOM_WRITE)
    await wr.write_value(b'\x01\x02\x03\x04', with_response=True)
    await wr.write_value(b'\x05\x06', with_response=False)
    await gc.write_long_value(wr.handle, bytes(range(80)))  # Prepare/Execute Write
    hrm = find_char(peer, gatt.GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC)
    await hrm.subscribe(lambda v: None)
    ind = find_char(peer, CUSTOM_INDICATE)
    await ind.subscribe(lambda v: None, prefer_notify=False)
    await settle()
    for bpm in (72, 74, 75, 77, 76):
        await w.periph.notify_subscribers(w.hr_measurement, bytes([0x00, bpm]))
        await asyncio.sleep(1.0)
    await w.periph.indicate_subscribers(w.indicate, b'\x01')
    await settle()
    await hrm.unsubscribe()
    await ind.unsubscribe()
    await w.disconnect(conn)
    return w


async def _discover_all(peer):
    await peer.discover_services()
    for s in peer.services:
        await s.discover_characteristics()
        for ch in s.characteristics:
            await ch.discover_descriptors()


async def sc_gatt_db_change(loop):
    """The peripheral's database changes between two connections (a firmware update)."""
    w = World(loop)
    await w.power_on()
    await w.advertise()
    await w.scan(0.5)
    conn, peer = await w.connect()
    await _discover_all(peer)
    await find_char(peer, gatt.GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC).read_value()
    await w.disconnect(conn)
    w.update_firmware()
    await w.advertise()
    conn, peer = await w.connect()
    await _discover_all(peer)
    await find_char(peer, gatt.GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC).read_value()
    await w.disconnect(conn)
    return w


async def _scan_and_connect(w, filter_duplicates=True, stop_scan=True):
    await w.power_on()
    await w.advertise()
    await w.scan(0.5, filter_duplicates=filter_duplicates, stop=False)
    if stop_scan:
        await w.central.stop_scanning(legacy=True)
    return await w.connect()


async def sc_bad_scan_duplicates(loop):  # BLE101
    w = World(loop)
    await w.power_on()
    await w.advertise()
    await w.scan(1.5, filter_duplicates=False)
    await settle()
    return w


async def sc_good_scan_duplicates(loop):
    w = World(loop)
    await w.power_on()
    await w.advertise()
    await w.scan(1.5, filter_duplicates=True)
    await settle()
    return w


async def sc_bad_scan_not_stopped(loop):  # BLE102
    w = World(loop)
    conn, peer = await _scan_and_connect(w, stop_scan=False)
    await peer.discover_service(gatt.GATT_BATTERY_SERVICE)
    await asyncio.sleep(3.0)
    await w.disconnect(conn)
    return w


async def sc_good_scan_not_stopped(loop):
    w = World(loop)
    conn, peer = await _scan_and_connect(w, stop_scan=True)
    await peer.discover_service(gatt.GATT_BATTERY_SERVICE)
    await asyncio.sleep(3.0)
    await w.disconnect(conn)
    return w


async def sc_bad_full_discovery(loop):  # BLE201 + BLE202
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    await peer.discover_services()
    await conn.gatt_client.discover_characteristics([], None)  # 0x0001-0xFFFF
    await find_char(peer, gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC).read_value()
    await w.disconnect(conn)
    return w


async def sc_good_full_discovery(loop):
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    [svc] = await peer.discover_service(gatt.GATT_BATTERY_SERVICE)
    await svc.discover_characteristics([gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC])
    await svc.characteristics[0].read_value()
    await w.disconnect(conn)
    return w


async def _battery(peer):
    [svc] = await peer.discover_service(gatt.GATT_BATTERY_SERVICE)
    await svc.discover_characteristics()
    return svc.characteristics[0]


async def sc_bad_polling_read(loop):  # BLE301
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    level = await _battery(peer)
    for i in range(8):
        w.battery.value = bytes([90 - i])
        await level.read_value()
        await asyncio.sleep(1.0)
    await w.disconnect(conn)
    return w


async def sc_good_polling_read(loop):
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    level = await _battery(peer)
    await level.subscribe(lambda v: None)
    for i in range(8):
        await w.periph.notify_subscribers(w.battery, bytes([90 - i]))
        await asyncio.sleep(1.0)
    await level.unsubscribe()
    await w.disconnect(conn)
    return w


async def _gap_name(peer):
    [svc] = await peer.discover_service(gatt.GATT_GENERIC_ACCESS_SERVICE)
    await svc.discover_characteristics([gatt.GATT_DEVICE_NAME_CHARACTERISTIC])
    return svc.characteristics[0]


async def sc_bad_redundant_read(loop):  # BLE302
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    name = await _gap_name(peer)
    for _ in range(4):
        await name.read_value()
        await asyncio.sleep(0.5)
    await w.disconnect(conn)
    return w


async def sc_good_redundant_read(loop):
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    name = await _gap_name(peer)
    await name.read_value()
    await w.disconnect(conn)
    return w


async def sc_bad_idle_connection(loop):  # BLE401
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    level = await _battery(peer)
    await level.read_value()
    await asyncio.sleep(35.0)
    await w.disconnect(conn)
    return w


async def sc_good_idle_connection(loop):
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    level = await _battery(peer)
    await level.read_value()
    await settle(0.5)
    await w.disconnect(conn)
    return w


async def sc_throughput_write_commands(loop):
    """A stream with parameters chosen so its throughput can be worked by hand: interval 30 ms,
    ATT_MTU 247, LE 1M and data length 27 (the virtual controller changes neither), one write
    command of 244 octets every interval for 100 intervals."""
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    await conn.update_parameters(30, 30, 0, 4000)
    await settle()
    await peer.request_mtu(247)
    for s in await peer.discover_service(CUSTOM_SERVICE):
        await s.discover_characteristics()
    wr = find_char(peer, CUSTOM_WRITE)
    start = loop.time()
    for i in range(100):
        # On the interval's clock, whatever handing one over took.
        await asyncio.sleep(max(0.0, start + i * 0.030 - loop.time()))
        await wr.write_value(bytes([i]) * 244, with_response=False)
    await settle()
    await w.disconnect(conn)
    return w


async def sc_bad_att_pipelining(loop):  # BLE403
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    level = await _battery(peer)
    gc = conn.gatt_client
    # Two requests back to back, the second before the first's response.
    await gc.send_command(att.ATT_Read_Request(attribute_handle=level.handle))
    await gc.send_command(att.ATT_Read_Request(attribute_handle=level.handle))
    await settle(0.2)
    await w.disconnect(conn)
    return w


async def sc_good_att_pipelining(loop):
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    level = await _battery(peer)
    await level.read_value()
    await level.read_value()
    await settle(0.2)
    await w.disconnect(conn)
    return w


async def _adv_only(w, adv, scan_rsp=b''):
    await w.power_on()
    await w.advertise(adv, scan_rsp)
    await w.scan(1.0)
    await settle()
    return w


async def sc_bad_adv_data(loop):  # BLE501: 32 bytes of AD; an AD structure running past the data
    w = World(loop, record='peripheral')
    too_long = ad(FLAGS, (0x09, b'A-very-long-device-name-27c'))  # 3 + 29 = 32 bytes
    await w.power_on()
    # Raw HCI: Bumble refuses > 31 bytes, so build the command parameters ourselves.
    await w.periph.send_command(hci.HCI_LE_Set_Advertising_Parameters_Command(
        advertising_interval_min=160, advertising_interval_max=160,
        advertising_type=0, own_address_type=1, peer_address_type=0,
        peer_address=hci.Address.ANY, advertising_channel_map=7,
        advertising_filter_policy=0))
    await w.periph.send_command(
        RawCommand(0x2008, bytes([len(too_long)]) + too_long))
    malformed = ad(FLAGS) + bytes([0x0A, 0x09]) + b'HRM'  # name claims 9 bytes, Data Length leaves 3
    await w.periph.send_command(
        RawCommand(0x2009, bytes([len(malformed)]) + malformed.ljust(31, b'\0')))
    await w.periph.send_command(hci.HCI_LE_Set_Advertising_Enable_Command(advertising_enable=1))
    await asyncio.sleep(0.5)
    await w.periph.send_command(hci.HCI_LE_Set_Advertising_Enable_Command(advertising_enable=0))
    await settle()
    return w


async def sc_good_adv_data(loop):
    w = World(loop, record='peripheral')
    await w.power_on()
    await w.advertise()
    await asyncio.sleep(0.5)
    await w.periph.stop_advertising()
    await settle()
    return w


async def sc_bad_adv_incomplete(loop):  # BLE502 + BLE503
    w = World(loop)
    # 28 bytes: the shortened name goes to the scan response, as iOS does.
    adv = ad(FLAGS, (0x02, u16s(0x180D)),
             (0xFF, struct.pack('<H', 0x004C) + b'\x01' + bytes([0, 0, 0, 0, 0, 0, 0, 0x40,
                                                                 0, 0, 0, 0, 0, 0, 0, 0])))
    return await _adv_only(w, adv, ad((0x06, SCAN_RSP_UUID128), (0x08, b'HRM')))


async def sc_good_adv_incomplete(loop):
    w = World(loop)
    adv = ad(FLAGS, (0x03, u16s(0x180D, 0x180F)), (0x09, b'HRM-1'))
    return await _adv_only(w, adv, ad((0x07, SCAN_RSP_UUID128)))


async def _first_name(peer):
    [svc] = await peer.discover_service(UUID.from_16_bits(0x181C))
    await svc.discover_characteristics([UUID.from_16_bits(0x2A8A)])
    return svc.characteristics[0]


async def sc_bad_sensitive_unencrypted(loop):  # BLE601
    w = World(loop)
    conn, peer = await _scan_and_connect(w)
    fn = await _first_name(peer)
    await fn.read_value()
    await fn.write_value(b'Grace', with_response=True)
    await w.disconnect(conn)
    return w


async def _pair_then_use_name(w):
    """Pair, then read and write the First Name characteristic on the encrypted link."""
    conn, peer = await _scan_and_connect(w)
    await conn.pair()
    await settle(0.2)
    fn = await _first_name(peer)
    await fn.read_value()
    await fn.write_value(b'Grace', with_response=True)
    await w.disconnect(conn)
    return w


async def sc_good_sensitive_unencrypted(loop):
    return await _pair_then_use_name(World(loop, central_io=PairingDelegate.KEYBOARD_INPUT_ONLY,
                                           periph_io=PairingDelegate.DISPLAY_OUTPUT_ONLY))


async def sc_bad_just_works(loop):  # BLE602
    w = World(loop)  # both NoInputNoOutput
    conn, peer = await _scan_and_connect(w)
    await conn.pair()
    await settle(0.2)
    await w.disconnect(conn)
    return w


async def sc_good_just_works(loop):
    w = World(loop, central_io=PairingDelegate.KEYBOARD_INPUT_ONLY,
              periph_io=PairingDelegate.DISPLAY_OUTPUT_ONLY)
    conn, peer = await _scan_and_connect(w)
    await conn.pair()
    await settle(0.2)
    await w.disconnect(conn)
    return w


# The debug key pair of LE Secure Connections (Core Vol 3 Part H 2.3.5.6.1): a device in debug
# mode uses it so a sniffer can decrypt the link; its private key is published.
DEBUG_PRIVATE_KEY = bytes.fromhex(
    '3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd')


async def sc_pairing_legacy_just_works(loop):  # LE legacy pairing, TK 0: any sniffer decrypts
    return await _pair_then_use_name(World(loop, secure_connections=False))


async def sc_pairing_legacy_passkey(loop):  # LE legacy Passkey Entry (123456): found by search
    return await _pair_then_use_name(World(loop, secure_connections=False,
                                           central_io=PairingDelegate.KEYBOARD_INPUT_ONLY,
                                           periph_io=PairingDelegate.DISPLAY_OUTPUT_ONLY))


async def sc_pairing_sc_debug_key(loop):  # LE Secure Connections, the peripheral in debug mode
    w = World(loop)
    w.periph.smp_manager._ecc_key = crypto.EccKey.from_private_key_bytes(DEBUG_PRIVATE_KEY)
    return await _pair_then_use_name(w)


async def sc_reconnect_by_uuid(loop):
    """A phone connecting to a device it already knows, as an iOS app does after
    retrievePeripherals: a direct connection (no scan, so no advertising in the log), the Device
    Name read by its UUID (iOS does so on every connection; the GAP service is never discovered),
    then only the Battery Service discovered by UUID, its level subscribed and notified."""
    w = World(loop)
    await w.power_on()
    await w.advertise()
    conn, peer = await w.connect()
    await peer.read_characteristics_by_uuid(UUID.from_16_bits(0x2A00))
    battery = await _battery(peer)
    await battery.discover_descriptors()
    await battery.subscribe(lambda value: None)
    await settle(0.1)
    for level in (90, 89, 88):
        w.battery.value = bytes([level])
        await w.periph.notify_subscribers(w.battery)
        await settle(1.0)
    await w.disconnect(conn)
    return w

async def sc_extended_adv_scan(loop):
    """LE Extended Advertising (a Bluetooth 5 controller): one connectable set whose advertising
    data (Flags, the 128-bit service UUID, a Complete Local Name and 60 octets of manufacturer
    data: 104 octets) needs more than legacy advertising's 31, found by an extended scan on LE 1M
    and LE Coded."""
    w = World(loop, extended=True)
    await w.power_on()
    data = ad(FLAGS, (0x07, SCAN_RSP_UUID128), (0x09, b'HRM-1 extended advertiser'),
              (0xFF, struct.pack('<H', 0x05F1) + bytes(range(58))))
    from bumble.device import AdvertisingParameters, AdvertisingEventProperties
    params = AdvertisingParameters(
        advertising_event_properties=AdvertisingEventProperties(is_connectable=True),
        primary_advertising_interval_min=100, primary_advertising_interval_max=100,
        own_address_type=hci.OwnAddressType.RANDOM)
    await w.periph.create_advertising_set(advertising_parameters=params, advertising_data=data,
                                          random_address=hci.Address(PERIPH_ADDR))
    await w.central.start_scanning(legacy=False, active=False, filter_duplicates=False)
    await asyncio.sleep(0.5)
    await w.central.stop_scanning(legacy=False)
    return w


class RawCommand(hci.HCI_Command):
    """An HCI command sent with exactly the given parameter bytes."""

    def __init__(self, op_code, parameters):
        super().__init__(op_code=op_code, parameters=parameters)


SCENARIOS = {
    'adv_scan': sc_adv_scan,
    'gatt_session': sc_gatt_session,
    'gatt_db_change': sc_gatt_db_change,
    'bad_scan_duplicates': sc_bad_scan_duplicates,
    'good_scan_duplicates': sc_good_scan_duplicates,
    'bad_scan_not_stopped': sc_bad_scan_not_stopped,
    'good_scan_not_stopped': sc_good_scan_not_stopped,
    'bad_full_discovery': sc_bad_full_discovery,
    'good_full_discovery': sc_good_full_discovery,
    'bad_polling_read': sc_bad_polling_read,
    'good_polling_read': sc_good_polling_read,
    'bad_redundant_read': sc_bad_redundant_read,
    'good_redundant_read': sc_good_redundant_read,
    'bad_idle_connection': sc_bad_idle_connection,
    'good_idle_connection': sc_good_idle_connection,
    'bad_att_pipelining': sc_bad_att_pipelining,
    'good_att_pipelining': sc_good_att_pipelining,
    'bad_adv_data': sc_bad_adv_data,
    'good_adv_data': sc_good_adv_data,
    'bad_adv_incomplete': sc_bad_adv_incomplete,
    'good_adv_incomplete': sc_good_adv_incomplete,
    'bad_sensitive_unencrypted': sc_bad_sensitive_unencrypted,
    'good_sensitive_unencrypted': sc_good_sensitive_unencrypted,
    'bad_just_works': sc_bad_just_works,
    'good_just_works': sc_good_just_works,
    'pairing_legacy_just_works': sc_pairing_legacy_just_works,
    'pairing_legacy_passkey': sc_pairing_legacy_passkey,
    'pairing_sc_debug_key': sc_pairing_sc_debug_key,
    'reconnect_by_uuid': sc_reconnect_by_uuid,
    'extended_adv_scan': sc_extended_adv_scan,
    'throughput_write_commands': sc_throughput_write_commands,
}


def run(name, out_dir):
    RNG.seed(name)
    random.seed(name)
    loop = VirtualClockLoop()
    asyncio.set_event_loop(loop)
    try:
        world = loop.run_until_complete(SCENARIOS[name](loop))
    finally:
        loop.close()
    base = os.path.join(out_dir, name)
    world.recorder.write_btsnoop(base + '.btsnoop')
    world.recorder.write_pcap(base + '.pcap')
    print(f'{name}: {len(world.recorder.records)} packets')
    for suffix, fmt in CONVERSIONS.get(name, ()):
        subprocess.run([sys.executable, CONVERTER, base + '.btsnoop', base + suffix, '--to', fmt],
                       check=True)


# The main capture also in every other format blesniff reads.
CONVERTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts', 'fixtures',
                         'convert_capture.py')
CONVERSIONS = {
    'gatt_session': [
        ('.pcapng', 'pcapng'),
        ('.dlt187.pcap', 'pcap187'),
        ('.dlt254.pcap', 'pcap254'),
        ('.monitor.btsnoop', 'btsnoop2001'),
        ('.h1.btsnoop', 'btsnoop1001'),
    ],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out', default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument('scenarios', nargs='*', metavar='SCENARIO')
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    names = args.scenarios or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(f'unknown scenario(s) {unknown}; known: {", ".join(SCENARIOS)}')
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        run(name, args.out)


if __name__ == '__main__':
    sys.exit(main())
