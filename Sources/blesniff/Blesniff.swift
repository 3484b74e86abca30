import Decoders
import Report
import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

@main
struct Blesniff: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blesniff",
        abstract: "Bluetooth Low Energy traffic analyzer: decode captures, rebuild GATT, audit app behaviour.",
        version: BlesniffVersion.text,
        subcommands: [Read.self, Gatt.self, Devices.self, Keys.self, Links.self, Audit.self, Rules.self, CaptureCommand.self,
                      Convert.self, ReportCommand.self, DiffCommand.self, Fields.self, Mock.self])

    /// Exit codes: 0 ok, 1 findings at or above the threshold, 2 unreadable input or bad usage.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let e as ExitCode {
            Glibc.exit(e.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            stderr(fullMessage(for: error))
            Glibc.exit(2)
        }
    }
}

/// Writes a line to standard error. Messages quote input (file names, zip entries, what a device
/// sent), so they go through `DisplayText` like every text output.
func stderr(_ s: String) {
    var line = DisplayText.escaped(s, .keepNewlines)
    if !line.hasSuffix("\n") { line += "\n" }
    writeStandardError(line)
}
