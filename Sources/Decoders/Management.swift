import Wire

/// BlueZ's management interface (MGMT) as the Linux monitor channel records it (BlueZ
/// doc/mgmt-api.txt; the monitor's control records of doc/btsnoop.txt): a Control Command or
/// Control Event record is the client's cookie (4 octets), then the MGMT opcode or event code
/// (2) and its parameters; Control Open names the client (bluetoothd, btmgmt, …).
public enum Management {
    /// Command names by opcode (0x0001–0x005A).
    static let commands: [String] = [
        "", "Read Management Version Information", "Read Management Supported Commands", "Read Controller Index List",
        "Read Controller Information", "Set Powered", "Set Discoverable", "Set Connectable", "Set Fast Connectable",
        "Set Bondable", "Set Link Security", "Set Secure Simple Pairing", "Set High Speed", "Set Low Energy",
        "Set Device Class", "Set Local Name", "Add UUID", "Remove UUID", "Load Link Keys", "Load Long Term Keys",
        "Disconnect", "Get Connections", "PIN Code Reply", "PIN Code Negative Reply", "Set IO Capability",
        "Pair Device", "Cancel Pair Device", "Unpair Device", "User Confirmation Reply",
        "User Confirmation Negative Reply", "User Passkey Reply", "User Passkey Negative Reply",
        "Read Local Out Of Band Data", "Add Remote Out Of Band Data", "Remove Remote Out Of Band Data",
        "Start Discovery", "Stop Discovery", "Confirm Name", "Block Device", "Unblock Device", "Set Device ID",
        "Set Advertising", "Set BR/EDR", "Set Static Address", "Set Scan Parameters", "Set Secure Connections",
        "Set Debug Keys", "Set Privacy", "Load Identity Resolving Keys", "Get Connection Information",
        "Get Clock Information", "Add Device", "Remove Device", "Load Connection Parameters",
        "Read Unconfigured Controller Index List", "Read Controller Configuration Information",
        "Set External Configuration", "Set Public Address", "Start Service Discovery",
        "Read Local Out Of Band Extended Data", "Read Extended Controller Index List", "Read Advertising Features",
        "Add Advertising", "Remove Advertising", "Get Advertising Size Information", "Start Limited Discovery",
        "Read Extended Controller Information", "Set Appearance", "Get PHY Configuration", "Set PHY Configuration",
        "Load Blocked Keys", "Set Wideband Speech", "Read Controller Capabilities",
        "Read Experimental Features Information", "Set Experimental Feature", "Read Default System Configuration",
        "Set Default System Configuration", "Read Default Runtime Configuration", "Set Default Runtime Configuration",
        "Get Device Flags", "Set Device Flags", "Read Advertisement Monitor Features",
        "Add Advertisement Patterns Monitor", "Remove Advertisement Monitor", "Add Extended Advertising Parameters",
        "Add Extended Advertising Data", "Add Advertisement Patterns Monitor With RSSI Threshold",
        "Set Mesh Receiver", "Read Mesh Features", "Mesh Send", "Mesh Send Cancel",
    ]

    /// Event names by code (0x0001–0x0032).
    static let events: [String] = [
        "", "Command Complete", "Command Status", "Controller Error", "Index Added", "Index Removed", "New Settings",
        "Class Of Device Changed", "Local Name Changed", "New Link Key", "New Long Term Key", "Device Connected",
        "Device Disconnected", "Connect Failed", "PIN Code Request", "User Confirmation Request",
        "User Passkey Request", "Authentication Failed", "Device Found", "Discovering", "Device Blocked",
        "Device Unblocked", "Device Unpaired", "Passkey Notify", "New Identity Resolving Key",
        "New Signature Resolving Key", "Device Added", "Device Removed", "New Connection Parameter",
        "Unconfigured Index Added", "Unconfigured Index Removed", "New Configuration Options",
        "Extended Index Added", "Extended Index Removed", "Local Out Of Band Extended Data Updated",
        "Advertising Added", "Advertising Removed", "Extended Controller Information Changed",
        "PHY Configuration Changed", "Experimental Feature Changed", "Default System Configuration Changed",
        "Default Runtime Configuration Changed", "Device Flags Changed", "Advertisement Monitor Added",
        "Advertisement Monitor Removed", "Controller Suspend", "Controller Resume",
        "Advertisement Monitor Device Found", "Advertisement Monitor Device Lost", "Mesh Packet Received",
        "Mesh Packet Transmission Complete",
    ]

    static let statuses: [String] = [
        "Success", "Unknown Command", "Not Connected", "Failed", "Connect Failed", "Authentication Failed",
        "Not Paired", "No Resources", "Timeout", "Already Connected", "Busy", "Rejected", "Not Supported",
        "Invalid Parameters", "Disconnected", "Not Powered", "Cancelled", "Invalid Index", "RFKilled",
        "Already Paired", "Permission Denied",
    ]

    static let addressTypes = ["BR/EDR", "LE Public", "LE Random"]

    /// The names as labels: a known command's or event's from its table, another's text interned.
    private static let commandLabels = FieldLabel.table(commands), eventLabels = FieldLabel.table(events)
    private static let statusLabels = FieldLabel.table(statuses)
    private static let addressTypeLabels = FieldLabel.table(addressTypes)
    private static let addressTypeBits = BitNames(addressTypes)

    static func commandLabel(_ op: UInt16) -> FieldLabel {
        Int(op) < commandLabels.count && op > 0 ? commandLabels[Int(op)] : FieldLabel(commandName(op))
    }

    static func eventLabel(_ code: UInt16) -> FieldLabel {
        Int(code) < eventLabels.count && code > 0 ? eventLabels[Int(code)] : FieldLabel(eventName(code))
    }

    static func statusLabel(_ s: UInt8) -> FieldLabel {
        Int(s) < statusLabels.count ? statusLabels[Int(s)] : FieldLabel(statusName(s))
    }

    public static func commandName(_ op: UInt16) -> String {
        Int(op) < commands.count && op > 0 ? commands[Int(op)] : "Unknown Command (" + Hex.prefixed(op, width: 4) + ")"
    }

    public static func eventName(_ code: UInt16) -> String {
        Int(code) < events.count && code > 0 ? events[Int(code)] : "Unknown Event (" + Hex.prefixed(code, width: 4) + ")"
    }

    public static func statusName(_ s: UInt8) -> String {
        Int(s) < statuses.count ? statuses[Int(s)] : "Unknown Status (" + Hex.prefixed(s, width: 2) + ")"
    }

    /// Events whose parameters begin with a device address and its type.
    static let addressEvents: Set<UInt16> = [0x0009, 0x000B, 0x000C, 0x000D, 0x000E, 0x000F, 0x0010, 0x0011, 0x0012,
                                             0x0014, 0x0015, 0x0016, 0x0017, 0x001A, 0x001B, 0x001C, 0x002A]

    /// One line for the frame: "MGMT Command Start Service Discovery (0x003a)", "MGMT Event Command
    /// Complete: Start Service Discovery: Success", "MGMT Open: bluetoothd".
    static func writeSummary(monitorOpcode op: UInt16, _ payload: Bytes, to line: inout TextLine) -> Bool {
        switch op {
        case MonitorOpcode.ctrlCommand:
            guard let code = payload.le16(4) else { return false }
            line += "MGMT Command "
            line.write(commandName(code))
            if Int(code) < commands.count, code > 0 {
                line += " ("
                line.write(hex: code, width: 4)
                line.write(byte: UInt8(ascii: ")"))
            }
        case MonitorOpcode.ctrlEvent:
            guard let code = payload.le16(4) else { return false }
            line += "MGMT Event "
            line.write(eventName(code))
            if code == 0x0001 || code == 0x0002, let cmd = payload.le16(6), let status = payload.byte(8) {
                line += ": "
                line.write(commandName(cmd))
                line += ": "
                line.write(statusName(status))
            } else if code == 0x0013, let type = payload.byte(6), let on = payload.byte(7) {
                line += on != 0 ? ": started" : ": stopped"
                line += type & 0x06 != 0 ? " (LE)" : ""
            } else if addressEvents.contains(code), let a = address(payload.from(6)) {
                line += " "
                line.write(a)
            }
        case MonitorOpcode.ctrlOpen:
            line += "MGMT Open"
            let name = client(payload)
            if !name.isEmpty { line += ": "; line.write(received: name) }
            // format (2), version (1), revision (2), flags (4): bit 0 a privileged socket.
            if let version = payload.byte(6), let revision = payload.le16(7), let flags = payload.byte(9) {
                if flags & 1 != 0 { line += " (privileged)" }
                line += " version "
                line.write(Int(version))
                line.write(byte: UInt8(ascii: "."))
                line.write(Int(revision))
            }
        case MonitorOpcode.ctrlClose:
            line += "MGMT Close"
        default:
            return false
        }
        return true
    }

    static func address(_ b: Bytes) -> BDAddr? {
        var r = ByteReader(b)
        return try? r.address()
    }

    /// Control Open: cookie (4), format (2), version (1), revision (2), flags (4), name length (1), name.
    static func client(_ payload: Bytes) -> Bytes {
        guard let n = payload.byte(13) else { return payload[payload.endIndex...] }
        return payload.from(14).prefix(Int(n)).prefix { $0 != 0 }
    }

    /// The record's fields; false when it is not a control record.
    static func writeFields(monitorOpcode op: UInt16, _ payload: Bytes, to out: FieldSink) -> Bool {
        guard op >= MonitorOpcode.ctrlOpen, op <= MonitorOpcode.ctrlEvent, payload.count >= 4 else { return false }
        let cookie = payload.le32(at: 0)
        out.add("Cookie", .uint(UInt64(cookie), hex: 8))
        switch op {
        case MonitorOpcode.ctrlCommand:
            guard let code = payload.le16(4) else { break }
            out.add("Opcode", .named(UInt64(code), hex: 4, commandLabel(code)))
            let params = payload.from(6)
            if code == 0x0023 || code == 0x0024 || code == 0x0041 || code == 0x003A, let t = params.byte(0) {
                out.add("Address Type", .flags(UInt64(t), hex: 2, SetBitNames(UInt64(t), in: addressTypeBits)))
            }
            out.add("Parameters", .bytes(params))
        case MonitorOpcode.ctrlEvent:
            guard let code = payload.le16(4) else { break }
            out.add("Event Code", .named(UInt64(code), hex: 4, eventLabel(code)))
            var params = payload.from(6)
            if code == 0x0001 || code == 0x0002, let cmd = params.le16(0), let status = params.byte(2) {
                out.add("Command Opcode", .named(UInt64(cmd), hex: 4, commandLabel(cmd)))
                out.add("Status", .named(UInt64(status), hex: 2, statusLabel(status)))
                params = params.from(3)
            } else if addressEvents.contains(code), let a = address(params), let t = params.byte(6) {
                out.add("Address", .address(a))
                out.add("Address Type", .named(UInt64(t), hex: 2, Int(t) < addressTypeLabels.count ? addressTypeLabels[Int(t)] : "Unknown"))
                params = params.from(7)
            } else if code == 0x0013, let t = params.byte(0), let on = params.byte(1) {
                out.add("Address Type", .flags(UInt64(t), hex: 2, SetBitNames(UInt64(t), in: addressTypeBits)))
                out.add("Discovering", .bool(on != 0))
                params = params.from(2)
            }
            out.add("Parameters", .bytes(params))
        case MonitorOpcode.ctrlOpen:
            out.add("Client", .received(client(payload)))
            if let version = payload.byte(6), let revision = payload.le16(7), let flags = payload.byte(9) {
                out.add("Version", .text(String(version) + "." + String(revision)))
                out.add("Privileged", .bool(flags & 1 != 0))
            }
        default:
            break
        }
        return true
    }
}

extension Management {
    /// A monitor record in one line: a management command or event (`writeSummary(monitorOpcode:)`),
    /// else the record's name and, for a system note or a new index, what it says.
    public static func writeMonitorSummary(_ op: UInt16, _ payload: Bytes, adapter: UInt16, to line: inout TextLine) {
        if writeSummary(monitorOpcode: op, payload, to: &line) { return }
        line += "Monitor "
        line.write(MonitorOpcode.name(op))
        switch op {
        case MonitorOpcode.systemNote:
            line += ": "
            line.write(received: payload.prefix { $0 != 0 })
        case MonitorOpcode.newIndex:
            // type, bus, BD_ADDR, name[8]
            var r = ByteReader(payload)
            guard (try? r.skip(2)) != nil, let a = try? r.address() else { return }
            let name = r.rest().prefix { $0 != 0 }
            line += ": hci"
            line.write(adapter)
            line.write(byte: 32)
            line.write(a)
            if !name.isEmpty { line.write(byte: 32); line.write(received: name) }
        default:
            break
        }
    }
}
