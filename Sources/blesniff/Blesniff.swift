import ArgumentParser

@main
struct Blesniff: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Bluetooth Low Energy traffic analyzer.")
}
