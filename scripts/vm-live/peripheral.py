#!/usr/bin/env python3
# Bumble controllers behind /dev/vhci (the kernel's hci0, hci1 ...) and a Bumble peripheral on the
# same virtual link: it advertises, serves a Battery Service whose level can be read and notifies
# every second, and pairs (Just Works) when asked.
# Usage: peripheral.py SECONDS [KERNEL_ADAPTERS]
import asyncio, sys
from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.device import Device
from bumble.host import Host
from bumble.hci import Address
from bumble.gatt import Service, Characteristic, GATT_BATTERY_SERVICE, GATT_BATTERY_LEVEL_CHARACTERISTIC
from bumble.core import AdvertisingData, PhysicalTransport

class Link(LocalLink):
    """Why the peripheral never answered the kernel's ATT requests: Bumble's LocalLink stamps LE
    ACL data with the sender controller's random address, but the kernel's controller connects
    with its public one, so the peripheral's host found no connection for the data and dropped
    every ATT request (the first Read By Group Type Request stayed unanswered). Stamp the data
    with the address the sender's connection actually uses."""
    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        dest = self.find_le_controller(destination_address)
        src = next((c.self_address for c in sender_controller.le_connections.values()
                    if c.peer_address == destination_address), sender_controller.random_address)
        if dest is not None:
            asyncio.get_running_loop().call_soon(lambda: dest.on_link_acl_data(src, transport, data))

async def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    adapters = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    link = Link()
    transports = []
    for i in range(adapters):
        t = await open_transport('vhci')
        transports.append(t)
        Controller(f'K{i}', host_source=t.source, host_sink=t.sink, link=link,
                   public_address=f'00:1B:DC:00:00:0{i + 1}')
    pc = Controller('P', link=link)
    dev = Device(name='blesniff-vm', address=Address('F0:F1:F2:F3:F4:F5'), host=Host(pc, pc))
    level = Characteristic(GATT_BATTERY_LEVEL_CHARACTERISTIC,
                           Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
                           Characteristic.READABLE, bytes([87]))
    dev.add_service(Service(GATT_BATTERY_SERVICE, [level]))
    await dev.power_on()
    dev.advertising_data = bytes(AdvertisingData([(AdvertisingData.COMPLETE_LOCAL_NAME, b'blesniff-vm'),
        (AdvertisingData.FLAGS, bytes([6])), (AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, bytes([0x0f, 0x18]))]))
    await dev.start_advertising(auto_restart=True)
    print('peripheral advertising', flush=True)
    end = asyncio.get_running_loop().time() + seconds
    value = 87
    while asyncio.get_running_loop().time() < end:
        await asyncio.sleep(1)
        value = 50 + (value + 1) % 50
        try:
            await dev.notify_subscribers(level, bytes([value]))
        except Exception as e:  # a subscriber that just disconnected
            print('notify:', e, flush=True)
asyncio.run(main())
