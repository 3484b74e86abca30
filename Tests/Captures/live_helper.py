#!/usr/bin/env python3
"""Live HCI traffic from Google's Bumble stack, for `blesniff capture --from FIFO` tests.

A central and a peripheral (Bumble virtual controllers on a LocalLink, real time) advertise,
scan, connect, discover the GATT database, read and write, and disconnect. The central host's
HCI traffic is streamed by Bumble's own PcapSnooper (the `pcapsnoop:pipe:PATH` snooper: pcap
DLT 201, one unbuffered write per packet) into PIPE, and the same bytes are written to
REFERENCE, a regular file to compare with.

Usage: live_helper.py PIPE REFERENCE
"""

import asyncio
import logging
import sys

from bumble import gatt, hci
from bumble.controller import Controller
from bumble.device import Device, DeviceConfiguration, Peer
from bumble.host import Host
from bumble.link import LocalLink
from bumble.snoop import PcapSnooper
from bumble.transport.common import AsyncPipeSink


class Tee:
    """Every write goes to the pipe and to the reference file alike."""

    def __init__(self, *outputs):
        self.outputs = outputs

    def write(self, data):
        for o in self.outputs:
            o.write(data)

    def flush(self):
        for o in self.outputs:
            o.flush()


def device(link, name, address):
    ctrl = Controller(name, link=link)
    config = DeviceConfiguration(name=name, address=hci.Address(address))
    return Device(config=config, host=Host(ctrl, AsyncPipeSink(ctrl)))


async def scenario(snooper):
    link = LocalLink()
    central = device(link, 'phone', 'C0:11:22:33:44:55')
    periph = device(link, 'HRM-1', 'D4:AB:CD:00:00:01')
    central.host.snooper = snooper
    battery = gatt.Characteristic(gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC,
                                  gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.WRITE,
                                  gatt.Characteristic.Permissions.READABLE | gatt.Characteristic.Permissions.WRITEABLE,
                                  b'\x5a')
    periph.add_services([gatt.Service(gatt.GATT_BATTERY_SERVICE, [battery])])
    await periph.power_on()
    await central.power_on()
    await periph.start_advertising(advertising_data=bytes([2, 1, 6, 6, 9]) + b'HRM-1',
                                   own_address_type=hci.OwnAddressType.RANDOM)
    await central.start_scanning(active=True)
    await asyncio.sleep(0.3)
    await central.stop_scanning()
    conn = await central.connect(hci.Address('D4:AB:CD:00:00:01'))
    peer = Peer(conn)
    await peer.discover_services()
    for s in peer.services:
        await s.discover_characteristics()
    for s in peer.services:
        for ch in s.characteristics:
            if ch.uuid == gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC:
                await ch.read_value()
                await ch.write_value(b'\x40', with_response=True)
    await asyncio.sleep(0.1)
    await conn.disconnect()
    await asyncio.sleep(0.1)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    logging.basicConfig(level=logging.ERROR)
    with open(sys.argv[1], 'wb', buffering=0) as pipe, open(sys.argv[2], 'wb') as reference:
        asyncio.run(scenario(PcapSnooper(Tee(pipe, reference))))


if __name__ == '__main__':
    main()
