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
from bumble import hci
from bumble.hci import Address
from bumble.pairing import PairingConfig, PairingDelegate
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

class KernelController(Controller):
    """Why the kernel never paired nor disconnected: with LE Extended Advertising (or LL Privacy)
    in the controller's features, Linux unmasks LE Enhanced Connection Complete and, after LE
    Create Connection, waits for that event alone (as the specification says: when it is unmasked
    the controller sends it instead of LE Connection Complete). Bumble's controller always sends
    LE Connection Complete, so the kernel's connect timed out (LE Create Connection Cancel 4 s
    later) and its connection was never set up for SMP or a Disconnect. Send the enhanced event
    when the host asked for it."""
    ENHANCED = 1 << (hci.HCI_LE_ENHANCED_CONNECTION_COMPLETE_EVENT - 1)

    def send_hci_packet(self, packet):
        if isinstance(packet, hci.HCI_LE_Connection_Complete_Event) and self.le_event_mask & self.ENHANCED:
            packet = hci.HCI_LE_Enhanced_Connection_Complete_Event(
                status=packet.status, connection_handle=packet.connection_handle, role=packet.role,
                peer_address_type=packet.peer_address_type, peer_address=packet.peer_address,
                local_resolvable_private_address=Address.ANY_RANDOM,
                peer_resolvable_private_address=Address.ANY_RANDOM,
                connection_interval=packet.connection_interval, peripheral_latency=packet.peripheral_latency,
                supervision_timeout=packet.supervision_timeout, central_clock_accuracy=packet.central_clock_accuracy)
        super().send_hci_packet(packet)

async def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    adapters = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    link = Link()
    transports = []
    for i in range(adapters):
        t = await open_transport('vhci')
        transports.append(t)
        KernelController(f'K{i}', host_source=t.source, host_sink=t.sink, link=link,
                   public_address=f'00:1B:DC:00:00:0{i + 1}')
    pc = Controller('P', link=link)
    dev = Device(name='blesniff-vm', address=Address('F0:F1:F2:F3:F4:F5'), host=Host(pc, pc))
    # Just Works: no input, no output; LE Secure Connections, bonding.
    dev.pairing_config_factory = lambda connection: PairingConfig(
        sc=True, mitm=False, bonding=True,
        delegate=PairingDelegate(io_capability=PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT))
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
