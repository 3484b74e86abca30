import Decoders

/// tshark's names for fields blesniff has, so a Wireshark filter can be pasted as it is
/// (`read -Y 'btatt.opcode == 0x1b'`). Each tshark field maps to the fields of ours that mean the
/// same (`tshark -G fields` gives its meaning); a filter on the alias matches when any of them
/// does, as a tshark field that occurs several times does. Names tshark has and we have not, or
/// whose meaning differs, are left out rather than approximated.
public enum FieldAliases {
    public static let pairs: [(tshark: String, ours: [String])] = [
        // Frame
        ("frame.number", ["frame"]),
        ("frame.time_relative", ["time"]),
        // ATT
        ("btatt.opcode", ["att.opcode"]),
        // Any handle in the PDU: the one it is on, those of a list (Read By Type, Read Multiple,
        // Multiple Handle Value), the characteristic value handle in a declaration and, in a
        // response, the request's handle (tshark's generated field, our `attribute`).
        // `-T fields` takes att.attribute.handle only where the others give nothing (a response).
        ("btatt.handle", ["att.handle", "att.attribute_data.handle", "att.handle_length_value_tuple.handle",
                          "att.set_of_handles.handle", "att.handles_information.found_attribute_handle",
                          "att.attribute_handle_in_error", "att.attribute.handle",
                          "att.attribute.characteristic_value_handle", "att.attribute.decoded_value.handle"]),
        // The raw value, Find By Type Value's and Prepare Write's included; tshark writes a value it
        // decodes (a CCCD's, …) only as its own fields.
        ("btatt.value", ["att.value", "att.attribute_value", "att.part_attribute_value"]),
        // Any 16-bit UUID in an ATT PDU; ours also matches the 128-bit form of the same UUID.
        ("btatt.uuid16", ["att.uuid"]),
        ("btatt.error_code", ["att.error_code"]),
        ("btatt.req_opcode_in_error", ["att.request_opcode_in_error"]),
        ("btatt.starting_handle", ["att.starting_handle"]),
        ("btatt.ending_handle", ["att.ending_handle"]),
        ("btatt.offset", ["att.value_offset"]),
        ("btatt.client_rx_mtu", ["att.client_rx_mtu"]),
        ("btatt.server_rx_mtu", ["att.server_rx_mtu"]),
        // Link layer (sniffer captures)
        ("btle.advertising_address", ["link_layer.bluetooth_low_energy_link_layer.advertising_address"]),
        ("btle.initiator_address", ["link_layer.bluetooth_low_energy_link_layer.initiator_address"]),
        ("btle.access_address", ["link_layer.bluetooth_low_energy_link_layer.access_address"]),
        ("btle.advertising_header.pdu_type", ["link_layer.bluetooth_low_energy_link_layer.packet_header.pdu_type"]),
        ("btle.data_header.llid", ["link_layer.bluetooth_low_energy_link_layer.data_header.llid"]),
        ("btle.data_header.next_expected_sequence_number", ["link_layer.bluetooth_low_energy_link_layer.data_header.nesn"]),
        ("btle.data_header.sequence_number", ["link_layer.bluetooth_low_energy_link_layer.data_header.sn"]),
        ("btle.data_header.more_data", ["link_layer.bluetooth_low_energy_link_layer.data_header.more_data"]),
        ("btle.data_header.length", ["link_layer.bluetooth_low_energy_link_layer.data_header.length"]),
        // A data PDU that repeats its sender's last one (Vol 6 Part B 4.5.9; where tshark and the
        // specification differ, blesniff follows the specification).
        ("btle.coding_indicator", ["link_layer.bluetooth_low_energy_link_layer.coding_indicator"]),
        ("btle.retransmit", ["link_layer.bluetooth_low_energy_link_layer.retransmission"]),
        // A control PDU is a field named after it, its value the opcode.
        ("btle.control_opcode", LLControlPDU.names.map { "link_layer.bluetooth_low_energy_link_layer." + $0.lowercased() }),
        // HCI events: RSSI is the Read RSSI result and each advertising report's or periodic
        // advertising response's RSSI.
        ("bthci_evt.code", ["hci_event.event_code"]),
        ("bthci_evt.le_meta_subevent", ["hci_event.subevent_code"]),
        // The device address of an event: a command's return (Read BD_ADDR), a connection's peer,
        // an advertising report's advertiser.
        ("bthci_evt.bd_addr", ["hci_event.bd_addr", "hci_event.peer_address", "hci_event.report.address"]),
        ("bthci_evt.rssi", ["hci_event.rssi", "hci_event.report.rssi", "hci_event.response.rssi"]),
        ("bthci_evt.status", ["hci_event.status"]),
        ("bthci_evt.reason", ["hci_event.reason"]),
        ("bthci_evt.connection_handle", ["hci_event.connection_handle"]),
        // HCI commands
        ("bthci_cmd.opcode", ["hci_command.opcode"]),
        ("bthci_cmd.opcode.ocf", ["hci_command.opcode.ocf"]),
        ("bthci_cmd.opcode.ogf", ["hci_command.opcode.ogf"]),
        ("bthci_cmd.connection_handle", ["hci_command.connection_handle"]),
        // HCI ACL
        ("bthci_acl.chandle", ["hci_acl.handle"]),
        ("bthci_acl.length", ["hci_acl.data_total_length"]),
        ("bthci_acl.pb_flag", ["hci_acl.packet_boundary_flag"]),
        ("bthci_acl.bc_flag", ["hci_acl.broadcast_flag"]),
        // L2CAP
        ("btl2cap.cid", ["l2cap.cid"]),
        ("btl2cap.length", ["l2cap.length"]),
        ("btl2cap.cmd_code", ["l2cap_signaling.command.command_code"]),
        // SMP
        ("btsmp.opcode", ["smp.opcode"]),
        ("btsmp.io_capability", ["smp.io_capability"]),
        ("btsmp.max_enc_key_size", ["smp.max_encryption_key_size"]),
        ("btsmp.reason", ["smp.reason"]),
    ]

    /// Fields of an alias that `-T fields` writes only when the alias's other fields are absent
    /// from the frame: they restate a handle the PDU already names.
    public static let fallbacks: Set<String> = ["att.attribute.handle"]

    /// How tshark writes a number of its field (`tshark -G fields`): BASE_HEX as `0x` and two
    /// digits per octet of its type, BASE_DEC (0 here) in decimal. Names not here are written
    /// as blesniff shows the field.
    public static let tsharkDigits: [String: Int] = [
        "btatt.opcode": 2, "btatt.handle": 4, "btatt.starting_handle": 4, "btatt.ending_handle": 4,
        "btatt.req_opcode_in_error": 2, "btatt.error_code": 2, "btatt.uuid16": 4, "btatt.client_rx_mtu": 0,
        "btatt.server_rx_mtu": 0, "btatt.offset": 0, "bthci_acl.chandle": 4, "bthci_acl.pb_flag": 0,
        "bthci_acl.bc_flag": 0, "bthci_acl.length": 0, "bthci_cmd.opcode": 4, "bthci_cmd.opcode.ogf": 4,
        "bthci_cmd.opcode.ocf": 4, "bthci_cmd.connection_handle": 4, "bthci_evt.code": 2,
        "bthci_evt.connection_handle": 4, "bthci_evt.status": 2, "bthci_evt.reason": 2, "bthci_evt.rssi": 0,
        "bthci_evt.le_meta_subevent": 2, "btl2cap.length": 0, "btl2cap.cid": 4, "btl2cap.cmd_code": 2,
        "btle.access_address": 8, "btle.coding_indicator": 0, "btle.advertising_header.pdu_type": 2,
        "btle.data_header.llid": 2, "btle.control_opcode": 2, "btle.data_header.next_expected_sequence_number": 0,
        "btle.data_header.sequence_number": 0, "btle.data_header.length": 0, "btsmp.opcode": 2,
        "btsmp.reason": 2, "btsmp.io_capability": 2, "btsmp.max_enc_key_size": 0, "frame.number": 0,
    ]

    /// Our fields for a tshark name, nil when it is not an alias.
    public static func fields(for name: String) -> [String]? { byName[name] }

    /// The tshark names of one of our fields (`blesniff fields` shows them next to it).
    public static func aliases(of field: String) -> [String] { byField[field] ?? [] }

    private static let byName: [String: [String]] = Dictionary(pairs.map { ($0.tshark, $0.ours) }, uniquingKeysWith: { a, _ in a })

    private static let byField: [String: [String]] = {
        var d: [String: [String]] = [:]
        for p in pairs { for f in p.ours { d[f, default: []].append(p.tshark) } }
        return d
    }()
}
