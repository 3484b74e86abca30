/// Names and parameter decoding of HCI commands and events. Placeholder until the tables land.
public enum HCICommands {
    public static func name(_ opcode: UInt16) -> String { "Opcode " + Hex.prefixed(opcode, width: 4) }
    public static func parameters(opcode: UInt16, _ params: Bytes) -> [Field] { [Field("Parameters", .bytes(params))] }
    public static func returnParameters(opcode: UInt16, _ params: Bytes) -> [Field] { [Field("Return Parameters", .bytes(params))] }
}

public enum HCIEvents {
    public static func name(_ code: UInt8) -> String { "Event " + Hex.prefixed(code, width: 2) }
    public static func leSubeventName(_ sub: UInt8) -> String { "Subevent " + Hex.prefixed(sub, width: 2) }
    public static func parameters(code: UInt8, _ params: Bytes) -> [Field] { [Field("Parameters", .bytes(params))] }
}

public enum HCIErrors {
    public static func name(_ code: UInt8) -> String { "Error " + Hex.prefixed(code, width: 2) }
}
