import ArgumentParser
import FoundationEssentials
import Report

/// `blesniff rules [ID]`: the audit rule catalogue, with the settings configuration gives them.
struct Rules: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rules", abstract: "List the audit rules, or describe one in full.")

    @Argument(help: "A rule id (BLE301) or name (polling-read) to describe in full.")
    var rule: String?

    @Option(name: .long, help: "Configuration file (default: the nearest .blesniff.yml upward from here).")
    var config: String?

    func run() throws {
        let configuration: AuditConfiguration
        do {
            configuration = try AuditConfiguration.load(orDiscover: config)
        } catch {
            writeStandardError("blesniff: error: " + String(describing: error) + "\n")
            throw ExitCode(AuditExit.inputError)
        }
        let settings = configuration.settings()
        let out = Output(fd: 1)
        defer { out.flush() }
        if let key = rule {
            guard let t = AuditRules.type(named: key) else {
                writeStandardError("blesniff: error: no rule " + key + " (see `blesniff rules`)\n")
                throw ExitCode(AuditExit.inputError)
            }
            out.write(RuleText.full(t.info, settings[t.info.id]))
            return
        }
        for info in AuditRules.infos { out.write(RuleText.line(info, settings[info.id])) }
    }
}

/// How `blesniff rules` prints a rule.
enum RuleText {
    static func line(_ info: RuleInfo, _ s: RuleSettings?) -> String {
        let severity = s.map { $0.enabled ? $0.severity.name : "off" } ?? info.severity.name
        let thresholds = info.options.isEmpty ? "-" : info.thresholds(s?.values)
        return info.id + "  " + pad(severity, 7) + "  " + pad(info.name, 31) + "  " + pad(thresholds, 28) + "  " + info.summary + "\n"
    }

    static func full(_ info: RuleInfo, _ s: RuleSettings?) -> String {
        var t = info.id + " " + info.name + "\n"
        t += "  severity: " + (s.map { $0.enabled ? $0.severity.name : "off (disabled)" } ?? info.severity.name)
        if let s, s.enabled, s.severity != info.severity { t += " (default " + info.severity.name + ")" }
        t += "\n  summary:  " + info.summary + "\n"
        t += "  guidance: " + info.guidance + "\n"
        if !info.notAFinding.isEmpty { t += "  not a finding: " + info.notAFinding + "\n" }
        if !info.options.isEmpty {
            t += "  options:\n"
            for o in info.options {
                let v = s?.values[o.name] ?? o.defaultValue
                t += "    " + o.name + ": " + o.format(v)
                if v != o.defaultValue { t += " (default " + o.format(o.defaultValue) + ")" }
                t += "  " + o.help + "\n"
            }
        }
        t += "  who chooses, per platform:\n"
        for p in Platform.described {
            let c = info.platforms[p]
            t += "    " + pad(p.title + ":", 16) + (c?.who == .stack ? "the stack: " : "the app: ")
                + (c?.text ?? "as above") + "\n"
        }
        t += "\n" + info.help + "\n"
        return t
    }

    private static func pad(_ s: String, _ w: Int) -> String { s.count >= w ? s : s + String(repeating: " ", count: w - s.count) }
}
