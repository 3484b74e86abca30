extension MockScript {
    /// Imports and the shapes of the captured tables.
    static let prelude = #"""
        import argparse
        import asyncio
        import json
        import logging
        import sys
        from dataclasses import dataclass, field

        from bumble import att, gatt, hci
        from bumble.core import UUID
        from bumble.device import Device, DeviceConfiguration, Peer
        from bumble.host import Host


        @dataclass
        class DescriptorSpec:
            handle: int
            uuid: str
            name: str
            values: list = field(default_factory=list)


        @dataclass
        class CharacteristicSpec:
            handle: int
            uuid: str
            name: str
            properties: str
            values: list = field(default_factory=list)
            replay: list = field(default_factory=list)
            descriptors: list = field(default_factory=list)


        @dataclass
        class ServiceSpec:
            start: int
            uuid: str
            name: str
            characteristics: list
            primary: bool = True
            includes: list = field(default_factory=list)

        """#

    /// The peripheral, working from the tables.
    static let runtime = #"""


        # ---------------------------------------------------------------------------
        # The peripheral
        # ---------------------------------------------------------------------------
        log = logging.getLogger('peripheral')

        # Type of the attributes that fill gaps between services (never inside one, so discovery
        # does not meet them).
        PLACEHOLDER_TYPE = UUID('6D6F636B-0000-4000-8000-00000000FFFF')
        Properties = gatt.Characteristic.Properties
        WRITES = Properties.WRITE | Properties.WRITE_WITHOUT_RESPONSE | Properties.AUTHENTICATED_SIGNED_WRITES


        def uuid(text):
            return UUID.from_16_bits(int(text, 16)) if len(text) == 4 else UUID(text)


        def uuid128(u):
            text = u.to_bytes(force_128=True)[::-1].hex().upper()
            return '-'.join((text[0:8], text[8:12], text[12:16], text[16:20], text[20:32]))


        class Values:
            """The values one attribute had in the capture. A Read Request moves on to the next
            (after the last, back to the first); Read Blob Requests continue the current one, so
            the pieces of a long value belong together."""

            def __init__(self, label, values, readable=True, writable=True):
                self.label, self.values = label, values or [b'']
                self.readable, self.writable = readable, writable
                self.index = -1

            def advance(self):
                self.index = (self.index + 1) % len(self.values)

            def read(self, connection):
                if not self.readable:
                    raise att.ATT_Error(att.ATT_READ_NOT_PERMITTED_ERROR)
                return self.values[max(self.index, 0)]

            def write(self, connection, value):
                if not self.writable:
                    raise att.ATT_Error(att.ATT_WRITE_NOT_PERMITTED_ERROR)
                log.info('write %s: %s', self.label, value.hex())


        class Peripheral:
            """DATABASE as a Bumble GATT server, advertising as captured, with the replays."""

            def __init__(self, device, speed=1.0):
                self.device, self.speed = device, speed
                self.values = {}    # Bumble handle -> Values, for reads
                self.replays = {}   # characteristic -> [(delay, value)]
                self.tasks = {}     # (connection, characteristic) -> replay task
                self.build()

            def build(self):
                server = self.device.gatt_server
                services, moved = {}, []
                for spec in DATABASE:
                    while server.next_handle() < spec.start:
                        server.add_attribute(att.Attribute(PLACEHOLDER_TYPE, 0, b''))
                    built = [self.characteristic(c) for c in spec.characteristics]
                    service = gatt.Service(uuid(spec.uuid), [ch for ch, _ in built], primary=spec.primary,
                                           included_services=[services[s] for s in spec.includes if s in services])
                    self.device.add_service(service)
                    services[spec.start] = service
                    moved.append((spec.name, spec.start, service.handle))
                    for ch, c in built:
                        for attribute in (ch, *ch.descriptors):
                            if values := getattr(attribute, 'captured_values', None):
                                self.values[attribute.handle] = values
                        moved.append((c.name, c.handle, ch.handle))
                        moved += [(f'{c.name} {d.name}', d.handle, attribute.handle)
                                  for d, attribute in zip(c.descriptors, ch.descriptors)]
                for name, captured, handle in moved:
                    if captured != handle:
                        log.warning('%s: handle 0x%04X in the capture, 0x%04X here', name, captured, handle)

            def characteristic(self, c):
                properties = Properties.from_string(c.properties) if c.properties else Properties(0)
                label = f'{c.name} (0x{c.handle:04X})'
                values = Values(label, c.values, bool(properties & Properties.READ), bool(properties & WRITES))
                permissions = ((att.Attribute.READABLE if values.readable else 0)
                               | (att.Attribute.WRITEABLE if values.writable else 0))
                ch = gatt.Characteristic(uuid(c.uuid), properties, permissions,
                                         gatt.CharacteristicValue(read=values.read, write=values.write))
                descriptors = []
                for d in c.descriptors:
                    if d.uuid == '2902':
                        # Bumble's own CCCD value keeps track of subscriptions; placed as captured.
                        value = self.device.gatt_server.make_descriptor_value(ch)
                    else:
                        own = Values(f'{c.name} {d.name} (0x{d.handle:04X})', d.values)
                        value = gatt.CharacteristicValue(read=own.read, write=own.write)
                    descriptor = gatt.Descriptor(uuid(d.uuid), att.Attribute.READABLE | att.Attribute.WRITEABLE, value)
                    if d.uuid != '2902':
                        descriptor.captured_values = own
                    descriptors.append(descriptor)
                ch.descriptors = descriptors
                ch.captured_values = values
                # Every subscription change is logged, replayed or not.
                ch.on('subscription', lambda bearer, notify, indicate, label=label: log.info(
                    'subscription %s: %s', label, 'indications' if indicate else 'notifications' if notify else 'off'))
                if c.replay:
                    self.replays[ch] = c.replay
                    ch.on('subscription', lambda bearer, notify, indicate, ch=ch: self.subscribed(bearer, ch, notify, indicate))
                return ch, c

            # Notifications and indications, from the moment a client subscribes.

            def subscribed(self, connection, ch, notify, indicate):
                if task := self.tasks.pop((connection, ch), None):
                    task.cancel()
                if notify or indicate:
                    self.tasks[(connection, ch)] = asyncio.create_task(self.replay(connection, ch, not notify))

            async def replay(self, connection, ch, indicate):
                send = self.device.indicate_subscriber if indicate else self.device.notify_subscriber
                for delay, value in self.replays[ch]:
                    await asyncio.sleep(delay / self.speed)
                    await send(connection, ch, value)

            def disconnected(self, connection):
                for key in [key for key in self.tasks if key[0] is connection]:
                    self.tasks.pop(key).cancel()

            def read_request_handler(self, handler):
                """The server's Read Request handler, preceded by moving the attribute to its next
                value (Read Blob Requests go straight to the server)."""
                def on_att_read_request(bearer, request):
                    if values := self.values.get(request.attribute_handle):
                        values.advance()
                    return handler(bearer, request)
                return on_att_read_request

            async def start(self):
                server = self.device.gatt_server
                server.on_att_read_request = self.read_request_handler(server.on_att_read_request)

                def on_connection(connection):
                    log.info('connected: %s', connection.peer_address)
                    connection.on('disconnection', lambda reason: (
                        log.info('disconnected: %s', connection.peer_address), self.disconnected(connection)))
                self.device.on('connection', on_connection)
                await self.device.power_on()
                await self.device.start_advertising(
                    advertising_data=ADVERTISING_DATA, scan_response_data=SCAN_RESPONSE_DATA,
                    own_address_type=hci.OwnAddressType.RANDOM, auto_restart=True,
                    advertising_interval_min=ADVERTISING_INTERVAL_MS, advertising_interval_max=ADVERTISING_INTERVAL_MS)
                log.info('advertising as %s (%s)', NAME, self.device.random_address)


        def make_device(host, address):
            # The captured Generic Access and Generic Attribute services are in DATABASE when the
            # capture discovered them: Bumble does not add its own.
            config = DeviceConfiguration(name=NAME, address=hci.Address(address),
                                         gap_service_enabled=False, gatt_service_enabled=False)
            return Device(config=config, host=host)


        async def serve(transport_name, address):
            from bumble.transport import open_transport
            async with await open_transport(transport_name) as transport:
                peripheral = Peripheral(make_device(Host(transport.source, transport.sink), address))
                await peripheral.start()
                await transport.source.terminated


        async def self_test(address):
            """A central in this process connects to the peripheral over a local link, discovers
            everything, reads every readable characteristic once per captured value, subscribes
            where it can, and prints what it found as JSON."""
            from bumble.controller import Controller
            from bumble.link import LocalLink
            from bumble.transport.common import AsyncPipeSink

            link = LocalLink()
            controllers = {}

            def host(name):
                controller = controllers[name] = Controller(name, link=link)
                return Host(controller, AsyncPipeSink(controller))

            # Replays run a thousand times faster than captured.
            peripheral = Peripheral(make_device(host('peripheral'), address), speed=1000.0)
            central = Device(config=DeviceConfiguration(name='central', address=hci.Address('C0:00:00:00:00:01')),
                             host=host('central'))
            await peripheral.start()
            await central.power_on()

            found = {'address': address}
            central.on('advertisement', lambda a: None if a.is_scan_response else
                       found.setdefault('advertising_data', a.data_bytes.hex()))
            await central.start_scanning(active=True)
            await asyncio.sleep(0.5)
            await central.stop_scanning()
            # Bumble's virtual controller answers scans with the advertising data: report the scan
            # response the peripheral's controller was given instead.
            sets = getattr(controllers['peripheral'], 'advertising_sets', {})
            given = [bytes(s.scan_response_data) for s in sets.values()]
            found['scan_response_data'] = (given[0] if given else SCAN_RESPONSE_DATA).hex()

            connection = await central.connect(hci.Address(address))
            peer = Peer(connection)
            await peer.discover_services()
            found['services'] = []
            received = {}
            for service in peer.services:
                await service.discover_characteristics()
                entry = {'uuid128': uuid128(service.uuid), 'start_handle': service.handle,
                         'end_handle': service.end_group_handle, 'characteristics': []}
                for ch in service.characteristics:
                    await ch.discover_descriptors()
                    c = {'uuid128': uuid128(ch.uuid), 'properties': int(ch.properties), 'value_handle': ch.handle,
                         'descriptors': [{'uuid128': uuid128(d.type), 'handle': d.handle} for d in ch.descriptors]}
                    if ch.properties & Properties.READ:
                        values = peripheral.values.get(ch.handle)
                        c['reads'] = [(await ch.read_value()).hex() for _ in (values.values if values else [b''])]
                    if ch.properties & (Properties.NOTIFY | Properties.INDICATE):
                        got = c['notifications'] = received[ch.handle] = []
                        await ch.subscribe(lambda value, got=got: got.append(bytes(value).hex()),
                                           prefer_notify=bool(ch.properties & Properties.NOTIFY))
                    entry['characteristics'].append(c)
                found['services'].append(entry)
            # Wait for the replays to finish.
            expected = {ch.handle: len(replay) for ch, replay in peripheral.replays.items()}
            for _ in range(100):
                if all(len(got) >= expected.get(handle, 0) for handle, got in received.items()):
                    break
                await asyncio.sleep(0.05)
            await connection.disconnect()
            print(json.dumps(found, indent=1))


        def main():
            parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
            parser.add_argument('transport', nargs='?',
                                help='Bumble transport to the controller: usb:0, serial:/dev/ttyACM0, '
                                     'tcp-client:127.0.0.1:9000, android-netsim, ...')
            parser.add_argument('--self-test', action='store_true',
                                help='serve and browse the database in this process; print what was found as JSON')
            parser.add_argument('--address', default=ADDRESS, help=f'random static address to advertise with (default {ADDRESS})')
            parser.add_argument('-v', '--verbose', action='store_true', help="Bumble's debug logging")
            args = parser.parse_args()
            logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                                format='%(asctime)s %(name)s: %(message)s', stream=sys.stderr)
            if args.self_test:
                asyncio.run(self_test(args.address))
            elif args.transport:
                asyncio.run(serve(args.transport, args.address))
            else:
                parser.error('give a Bumble transport (e.g. usb:0) or --self-test')


        if __name__ == '__main__':
            main()

        """#
}
